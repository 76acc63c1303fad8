# Thin wrapper over the two builds: Meson for userspace, Kbuild for rbln.ko.
#   make            build userspace (build/)
#   make run        the main job on the default (emulated devices)
#   make test       the whole test suite; last line "N passed, N failed"
#   make module     build rbln.ko against Debian's 6.12 headers
#   make install    install userspace (meson install): libnpu with its
#                   headers and libnpu.pc, the commands, their man pages,
#                   the udev rule; the module goes through DKMS or
#                   modules_install (Documentation/admin-guide.md)
#   make deb        the Debian packages (rbln-dkms, libnpu1, libnpu-dev,
#                   rbln-tools, rbln-engine), checked by lintian, into
#                   $(BUILD)/deb

BUILD ?= build
KVER ?= $(shell ls -d /usr/src/linux-headers-6.12*-amd64 2>/dev/null | sort -V | tail -n 1 | sed 's|.*/linux-headers-||')
KDIR ?= /usr/src/linux-headers-$(KVER)

.PHONY: all deps build run test module module-clean install deb clean

all: build

deps:
	@tools/install-deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

run:
	BUILD=$(BUILD) tools/quickstart.sh

test:
	bash tests/run-all.sh

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

module-clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

install: build
	meson install -C $(BUILD)

deb:
	bash tests/install/packages.sh $(BUILD)/deb

clean:
	rm -rf $(BUILD) build-asan build-fuzz
