/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the serving-layer tests: fixture paths, scratch directories,
 * file writers and message checks.
 */
#ifndef RBLN_SERVE_TEST_H
#define RBLN_SERVE_TEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include <json-c/json.h>

/* tests/serve/fixtures/<rel> in a static buffer rotated between slots. */
const char *fixture(const char *rel);
/* The shared models directory ($RBLN_MODELS_DIR or the recorded default). */
const char *models_dir(void);
const char *model_path(const char *name);

char *tmpdir_new(void);
void tmpdir_remove(const char *dir);
char *path_join(const char *dir, const char *name);	/* malloc'd */
void write_text(const char *path, const char *text);
void make_dir(const char *path);
char *read_text(const char *path, size_t *len);

/* Fails unless msg contains every given substring (list ends with NULL). */
void assert_contains_all(const char *msg, ...);

/* Parses JSON text or fails the test. */
json_object *parse_json(const char *text, size_t len);
/* The member at a dotted path ("choices.0.text"); fails when absent. */
json_object *jpath(json_object *o, const char *path);
const char *jpath_str(json_object *o, const char *path);
int64_t jpath_int(json_object *o, const char *path);
bool jpath_has(json_object *o, const char *path);
/* True when the path's last member is present and JSON null. */
bool jpath_null(json_object *o, const char *path);

#endif
