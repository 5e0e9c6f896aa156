/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One request line to one reply: parse, check the envelope (v, id, cmd), find the command,
 * check its argument names, run the handler, shape the reply. Whatever the line holds, the
 * reply is a valid JSON object with "v", "id" (the request's when it has an integer one, else
 * null) and "ok".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_private.h"

/* The error codes of the protocol: errno names (doc/control-protocol.md keeps the same list). */
#define CTL_ERRNOS(X) \
	X(EPERM) X(ENOENT) X(ESRCH) X(EINTR) X(EIO) X(ENXIO) X(E2BIG) X(EBADF) X(EAGAIN) \
	X(ENOMEM) X(EACCES) X(EFAULT) X(EBUSY) X(EEXIST) X(ENODEV) X(EINVAL) X(ENFILE) \
	X(EMFILE) X(EFBIG) X(ENOSPC) X(EPIPE) X(EDOM) X(ERANGE) X(EDEADLK) X(ENAMETOOLONG) \
	X(ENOSYS) X(ENOTEMPTY) X(ENODATA) X(ETIME) X(EPROTO) X(EBADMSG) X(EOVERFLOW) \
	X(EMSGSIZE) X(EPROTONOSUPPORT) X(ENOTSUP) X(EADDRINUSE) X(EADDRNOTAVAIL) \
	X(ENETDOWN) X(ENETUNREACH) X(ECONNABORTED) X(ECONNRESET) X(ENOBUFS) X(EISCONN) \
	X(ENOTCONN) X(ESHUTDOWN) X(ETIMEDOUT) X(ECONNREFUSED) X(EHOSTUNREACH) X(EALREADY) \
	X(EINPROGRESS) X(ECANCELED)

#define CTL_ERRNO_ENTRY(e) { e, #e },

static const struct {
	int value;
	const char *name;
} errno_names[] = {
	CTL_ERRNOS(CTL_ERRNO_ENTRY)
};

const char *
roce_ctl_errno_name(int err)
{
	unsigned int i;

	if (err < 0)
		err = -err;
	for (i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].value == err)
			return errno_names[i].name;
	return "EUNKNOWN";
}

int
roce_ctl_errno_value(const char *name)
{
	unsigned int i;

	/* Linux spells one errno two ways. */
	if (name != NULL && strcmp(name, "EOPNOTSUPP") == 0)
		return ENOTSUP;
	for (i = 0; name != NULL && i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (strcmp(errno_names[i].name, name) == 0)
			return errno_names[i].value;
	return 0;
}

json_t *
ctl_text(const char *s)
{
	json_t *j = json_string(s);
	char *copy, *p;

	if (j != NULL)
		return j;
	/* Not UTF-8 (a handler's bytes, or a message cut inside a character). */
	copy = strdup(s);
	if (copy == NULL)
		return NULL;
	for (p = copy; *p != '\0'; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

json_t *
ctl_error_reply(json_t *id, int err, const char *message)
{
	json_t *error = json_object(), *reply = json_object();

	if (message == NULL)
		message = strerror(err < 0 ? -err : err);
	json_object_set_new(error, "code", json_string(roce_ctl_errno_name(err)));
	json_object_set_new(error, "message", ctl_text(message));
	json_object_set_new(reply, "v", json_integer(ROCE_CTL_VERSION));
	json_object_set(reply, "id", json_is_integer(id) ? id : json_null());
	json_object_set_new(reply, "ok", json_false());
	json_object_set_new(reply, "error", error);
	return reply;
}

static const struct roce_ctl_cmd *
find_cmd(const struct roce_ctl_server *srv, const char *name)
{
	unsigned int i;

	for (i = 0; i < srv->nb_cmds; i++)
		if (strcmp(srv->cmds[i].name, name) == 0)
			return &srv->cmds[i];
	return NULL;
}

#define ARG_SEPARATORS " \t\n"

/* Whether @w is one of the words of @list (separated by blanks or newlines). */
static bool
word_in(const char *list, const char *w)
{
	size_t n = strlen(w);
	const char *p = list;

	while (*p != '\0') {
		size_t k;

		p += strspn(p, ARG_SEPARATORS);
		k = strcspn(p, ARG_SEPARATORS);
		if (k == n && n > 0 && strncmp(p, w, n) == 0)
			return true;
		p += k;
	}
	return false;
}

static json_t *
args_array(const char *list)
{
	json_t *a = json_array();
	const char *p = list;

	while (p != NULL && *p != '\0') {
		size_t n;

		p += strspn(p, ARG_SEPARATORS);
		n = strcspn(p, ARG_SEPARATORS);
		if (n > 0)
			json_array_append_new(a, json_stringn(p, n));
		p += n;
	}
	return a;
}

/* The built-in "help": every command with its help line and arguments. */
static int
builtin_help(void *arg, json_t *req, json_t *reply)
{
	const struct roce_ctl_server *srv = arg;
	json_t *list = json_array();
	unsigned int i;

	(void)req;
	for (i = 0; i < srv->nb_cmds; i++) {
		const struct roce_ctl_cmd *c = &srv->cmds[i];

		json_array_append_new(list, json_pack("{s:s,s:s,s:o}", "name", c->name,
				"help", c->help != NULL ? c->help : "",
				"args", args_array(c->args)));
	}
	if (find_cmd(srv, "help") == NULL)
		json_array_append_new(list, json_pack("{s:s,s:s,s:[]}", "name", "help",
				"help", "list the commands", "args"));
	json_object_set_new(reply, "commands", list);
	return 0;
}

static const struct roce_ctl_cmd help_cmd = {
	"help", builtin_help, "list the commands", "",
};

/* Check the envelope; on success *cmd is the command to run, else the error reply is made. */
static json_t *
check_envelope(struct roce_ctl_server *srv, json_t *req, const struct roce_ctl_cmd **cmd,
		void **arg)
{
	char msg[CTL_MAX_MESSAGE];
	json_t *id = json_object_get(req, "id");
	json_t *v = json_object_get(req, "v");
	json_t *name = json_object_get(req, "cmd");
	const char *key;
	json_t *val;

	if (!json_is_integer(id))
		return ctl_error_reply(NULL, -EPROTO, id == NULL ? "missing \"id\"" :
				"\"id\" must be an integer");
	if (v == NULL)
		return ctl_error_reply(id, -EPROTO, "missing \"v\"");
	if (!json_is_integer(v) || json_integer_value(v) != ROCE_CTL_VERSION) {
		snprintf(msg, sizeof(msg), "unsupported protocol version (this server speaks %d)",
				ROCE_CTL_VERSION);
		return ctl_error_reply(id, -EPROTO, msg);
	}
	if (!json_is_string(name))
		return ctl_error_reply(id, -EPROTO, name == NULL ? "missing \"cmd\"" :
				"\"cmd\" must be a string");
	*arg = srv->arg;
	*cmd = find_cmd(srv, json_string_value(name));
	if (*cmd == NULL && strcmp(json_string_value(name), "help") == 0) {
		*cmd = &help_cmd;
		*arg = srv;
	}
	if (*cmd == NULL) {
		snprintf(msg, sizeof(msg), "unknown command \"%.64s\"", json_string_value(name));
		return ctl_error_reply(id, -ENOTSUP, msg);
	}
	if ((*cmd)->args == NULL)
		return NULL;
	json_object_foreach(req, key, val) {
		if (strcmp(key, "v") == 0 || strcmp(key, "id") == 0 || strcmp(key, "cmd") == 0 ||
				word_in((*cmd)->args, key))
			continue;
		snprintf(msg, sizeof(msg), "unknown argument \"%.64s\" for %s (accepted: %s)",
				key, (*cmd)->name, (*cmd)->args[0] ? (*cmd)->args : "none");
		return ctl_error_reply(id, -EINVAL, msg);
	}
	return NULL;
}

static bool
blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

json_t *
ctl_dispatch(struct roce_ctl_server *srv, const char *line, size_t len)
{
	const struct roce_ctl_cmd *cmd = NULL;
	char msg[CTL_MAX_MESSAGE];
	json_t *req, *reply, *id;
	json_error_t jerr;
	void *arg = NULL;
	int rc;

	if (blank(line, len))
		return NULL;
	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (req == NULL) {
		snprintf(msg, sizeof(msg), "invalid JSON at column %d: %s", jerr.column, jerr.text);
		return ctl_error_reply(NULL, -EPROTO, msg);
	}
	if (!json_is_object(req)) {
		json_decref(req);
		return ctl_error_reply(NULL, -EPROTO, "a request must be a JSON object");
	}
	reply = check_envelope(srv, req, &cmd, &arg);
	if (reply != NULL) {
		json_decref(req);
		return reply;
	}
	id = json_object_get(req, "id");
	reply = json_pack("{s:i,s:O,s:b}", "v", ROCE_CTL_VERSION, "id", id, "ok", 1);
	if (reply == NULL) {
		json_decref(req);
		return NULL;
	}
	rc = cmd->fn(arg, req, reply);
	if (rc < 0) {
		const char *m = ctl_reply_message(reply);
		json_t *err = ctl_error_reply(id, rc, m);

		json_decref(reply);
		reply = err;
	} else {
		json_object_del(reply, "error");
		json_object_set_new(reply, "v", json_integer(ROCE_CTL_VERSION));
		json_object_set(reply, "id", id);
		json_object_set_new(reply, "ok", json_true());
	}
	json_decref(req);
	return reply;
}
