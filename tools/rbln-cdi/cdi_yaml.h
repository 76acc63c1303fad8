/* SPDX-License-Identifier: MIT */
/* cdi_yaml.h - a json-c document written as YAML (libyaml's emitter). */
#ifndef RBLN_CDI_YAML_H
#define RBLN_CDI_YAML_H

#include <stdio.h>

#include <json-c/json.h>

/* Writes @doc to @out as one YAML document; 0, or -1 with @err set. */
int rbln_cdi_write_yaml(FILE *out, struct json_object *doc, const char **err);

#endif
