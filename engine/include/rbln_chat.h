/* SPDX-License-Identifier: MIT */
/*
 * Chat templates of a Hugging Face checkpoint (chat_template.jinja, or
 * "chat_template" in tokenizer_config.json), rendered the way transformers'
 * apply_chat_template does: variables messages, tools, documents,
 * add_generation_prompt and the special tokens (bos_token, eos_token...).
 */
#ifndef RBLN_CHAT_H
#define RBLN_CHAT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "rbln_error.h"

struct rbln_chat_template;

/* Special-token strings the template may use; NULL when the model has none. */
struct rbln_chat_tokens {
	const char *bos_token;
	const char *eos_token;
	const char *unk_token;
	const char *pad_token;
};

/* The longest template accepted: real ones are a few KiB. */
#define RBLN_CHAT_TEMPLATE_MAX ((size_t)1 << 20)

/* The template transformers uses when none is named. */
#define RBLN_CHAT_TEMPLATE_DEFAULT "default"

/*
 * Loads the template called `name` (NULL or "" = "default"): chat_template.jinja
 * is the default one; tokenizer_config.json's "chat_template" is one template
 * or a list of {"name", "template"}.
 */
int rbln_chat_template_load_named(const char *model_dir, const char *name,
				  struct rbln_chat_template **out, struct rbln_error *err);
/* The one named by $RBLN_CHAT_TEMPLATE_NAME, else "default". */
int rbln_chat_template_load(const char *model_dir, struct rbln_chat_template **out,
			    struct rbln_error *err);
/* A template from text; `name` appears in errors. */
int rbln_chat_template_from_text(const char *src, size_t len, const char *name,
				 const struct rbln_chat_tokens *tokens,
				 struct rbln_chat_template **out, struct rbln_error *err);
void rbln_chat_template_free(struct rbln_chat_template *t);

struct rbln_chat_options {
	bool add_generation_prompt;
	const char *tools_json;		/* JSON array or NULL (renders as tools=None) */
	const char *extra_vars_json;	/* JSON object of further variables, or NULL */
	time_t now;			/* for strftime_now; 0 = current time */
};

/*
 * Renders messages given as a JSON array of {"role": ..., "content": ...}
 * objects (other keys, e.g. tool_calls, are passed through).
 */
int rbln_chat_render_json(const struct rbln_chat_template *t, const char *messages_json,
			  size_t len, const struct rbln_chat_options *opt, char **text,
			  size_t *text_len, struct rbln_error *err);

struct rbln_chat_message {
	const char *role;
	const char *content;
};

int rbln_chat_render(const struct rbln_chat_template *t, const struct rbln_chat_message *msgs,
		     size_t n, const struct rbln_chat_options *opt, char **text, size_t *text_len,
		     struct rbln_error *err);

#endif
