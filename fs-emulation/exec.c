/* exec resolution: the binary, a `#!` interpreter chain, and the ELF
 * interpreter, each decided in the virtual filesystem. */
#include "fs-emulation/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-emulation/vfs.h"

/* PT_INTERP of an ELF file, or "" when it has none.  0 or -ENOEXEC. */
static int elf_interp(int fd, char *out, size_t outlen)
{
	out[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return -ENOEXEC;
	int r = 0;
	size_t n;
	if (elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &n) != 0) {
		r = -ENOEXEC;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz == 0 || ph.p_filesz >= outlen) {
			r = -ENOEXEC;
			break;
		}
		ssize_t got = pread(fd, out, ph.p_filesz, (off_t)ph.p_offset);
		if (got != (ssize_t)ph.p_filesz) {
			r = -ENOEXEC;
			break;
		}
		out[ph.p_filesz] = '\0';
		if (strlen(out) != ph.p_filesz - 1)
			r = -ENOEXEC; /* the kernel also wants exactly one NUL at the end */
		break;
	}
out:
	elf_end(e);
	return r;
}

static int resolve_file(struct vfs *v, struct task *t, const char *base, const char *path, int how,
			struct exec_plan *plan, struct vfs_path *node, int *fd)
{
	int r = vfs_walk(v, t, base, path,
			 ((how & EXEC_NOFOLLOW) ? 0 : VW_FOLLOW) |
				 ((how & EXEC_VIEW_PATH) ? 0 : VW_TASK_ROOT),
			 node);
	if (r < 0 || !node->exists) {
		if (node->outside) {
			plan->outside = true;
			plan->deny_rule = "fs.outside-view";
			snprintf(plan->denied_path, sizeof plan->denied_path, "%s", path);
		}
		if (r == 0)
			vfs_path_release(node);
		return r < 0 ? r : -ENOENT;
	}
	if (S_ISLNK(node->st.st_mode)) {
		vfs_path_release(node);
		return -ELOOP;
	}
	if (!S_ISREG(node->st.st_mode) || node->kind != VN_HOST) {
		vfs_path_release(node);
		return -EACCES;
	}
	*fd = vfs_open(v, t, node, O_RDONLY, 0);
	if (*fd < 0) {
		/* An execute-only file: moat cannot see its interpreter, so it
		 * cannot decide what the kernel would load with it.  Refused. */
		if (*fd == -EACCES)
			plan->deny_rule = "exec.unreadable";
		vfs_path_release(node);
		return *fd;
	}
	return 0;
}

/* The first line of a script, after its "#!" (modified in place), split
 * as the kernel splits it: "interp [one-arg]", blanks around each trimmed.
 * *arg is NULL when there is none.  0, or -ENOEXEC when no interpreter
 * is named. */
static int shebang_split(char *line, char **interp, char **arg)
{
	line[strcspn(line, "\n")] = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line)
		return -ENOEXEC;
	char *sp = line + strcspn(line, " \t");
	*interp = line;
	*arg = NULL;
	if (*sp) {
		*sp++ = '\0';
		while (*sp == ' ' || *sp == '\t')
			sp++;
		size_t al = strlen(sp);
		while (al && (sp[al - 1] == ' ' || sp[al - 1] == '\t'))
			sp[--al] = '\0';
		if (*sp)
			*arg = sp;
	}
	return 0;
}

/* Script `script` (as named) runs under `interp` [arg]: the kernel's argv
 * is interp [arg] script args...  For a chain the outer interpreter goes
 * first, and the new strings replace the chain's first element: this
 * script as named.  0 or -E2BIG past EXEC_MAX_PREFIX strings. */
static int chain_push(char (*chain)[PATH_MAX], int *nchain, const char *interp, const char *arg,
		      const char *script)
{
	if (*nchain + (arg ? 2 : 1) + 1 > EXEC_MAX_PREFIX)
		return -E2BIG;
	char merged[EXEC_MAX_PREFIX][PATH_MAX];
	int nm = 0;
	snprintf(merged[nm++], PATH_MAX, "%s", interp);
	if (arg)
		snprintf(merged[nm++], PATH_MAX, "%s", arg);
	snprintf(merged[nm++], PATH_MAX, "%s", script);
	for (int i = *nchain ? 1 : 0; i < *nchain; i++)
		memcpy(merged[nm++], chain[i], PATH_MAX);
	for (int i = 0; i < nm; i++)
		memcpy(chain[i], merged[i], PATH_MAX);
	*nchain = nm;
	return 0;
}

/* The ELF interpreter of the binary open on `fd`, decided.  The kernel
 * opens PT_INTERP by host path: the virtual path must name that very
 * file, or a view could run an interpreter it does not show.  0 or -errno,
 * with the plan's deny_rule set when the refusal is a policy one. */
static int interp_decide(struct vfs *v, struct task *t, int fd, struct exec_plan *plan)
{
	char interp[PATH_MAX];
	int r = elf_interp(fd, interp, sizeof interp);
	if (r < 0 || !interp[0])
		return r;
	struct vfs_path in;
	r = vfs_walk(v, t, "/", interp, VW_FOLLOW | VW_TASK_ROOT, &in);
	if (r < 0 || !in.exists) {
		if (r == 0)
			vfs_path_release(&in);
		if (in.outside) {
			plan->deny_rule = "fs.outside-view";
			snprintf(plan->denied_path, sizeof plan->denied_path, "%s", interp);
		}
		return -ENOENT;
	}
	vfs_path_release(&in);
	struct stat hs;
	if (stat(interp, &hs) < 0 || hs.st_dev != in.st.st_dev || hs.st_ino != in.st.st_ino) {
		plan->deny_rule = "exec.interpreter-mismatch";
		snprintf(plan->denied_path, sizeof plan->denied_path, "%s", interp);
		return -EACCES;
	}
	plan->has_interp = true;
	plan->interp_dev = hs.st_dev;
	plan->interp_ino = hs.st_ino;
	return 0;
}

/* The binary itself: `node`, open on `fd`, whose first `n` bytes are
 * `hdr`.  Fills the plan's file and interpreter; releases node, closes fd.
 * 0 or -errno. */
static int binary_decide(struct vfs *v, struct task *t, struct vfs_path *node, int fd,
			 const char *hdr, ssize_t n, struct exec_plan *plan)
{
	plan->dev = node->st.st_dev;
	plan->ino = node->st.st_ino;
	snprintf(plan->vpath, sizeof plan->vpath, "%s", node->vpath);
	int r = vfs_host_path(node, plan->host, sizeof plan->host);
	vfs_path_release(node);
	if (r == 0 && fd >= 0 && n >= 4 && memcmp(hdr, "\177ELF", 4) == 0)
		r = interp_decide(v, t, fd, plan);
	/* The open file itself goes to the exec (ADDFD cannot pass an O_PATH
	 * fd): readable, but an exec moat allows is of a file the sandbox
	 * may read (resolve_file refuses an execute-only one). */
	if (r == 0 && fd >= 0)
		plan->fd = fd;
	else if (fd >= 0)
		close(fd);
	return r;
}

int vfs_exec_resolve(struct vfs *v, struct task *t, const char *base, const char *path, int how,
		     struct exec_plan *plan)
{
	memset(plan, 0, offsetof(struct exec_plan, prefix));
	plan->fd = -1;
	plan->nprefix = 0;
	plan->outside = false;
	plan->deny_rule = NULL;
	plan->denied_path[0] = '\0';
	char cur[PATH_MAX];
	snprintf(cur, sizeof cur, "%s", path);
	/* Scripts nest (the interpreter may itself be a script); the kernel
	 * allows a few levels, and so do we. */
	char chain[EXEC_MAX_PREFIX][PATH_MAX];
	int nchain = 0;
	for (int depth = 0;; depth++) {
		if (depth > 4)
			return -ELOOP;
		struct vfs_path node;
		int fd = -1;
		int r = resolve_file(v, t, base, cur, depth == 0 ? how : 0, plan, &node, &fd);
		if (r < 0)
			return r;
		char hdr[256];
		ssize_t n = fd >= 0 ? pread(fd, hdr, sizeof hdr - 1, 0) : 0;
		if (n < 0)
			n = 0;
		hdr[n] = '\0';
		if (n < 2 || hdr[0] != '#' || hdr[1] != '!') {
			r = binary_decide(v, t, &node, fd, hdr, n, plan);
			if (r < 0)
				return r;
			plan->nprefix = nchain;
			for (int i = 0; i < nchain; i++)
				memcpy(plan->prefix[i], chain[i], PATH_MAX);
			return 0;
		}
		close(fd);
		vfs_path_release(&node);
		char *interp, *arg;
		r = shebang_split(hdr + 2, &interp, &arg);
		if (r == 0)
			r = chain_push(chain, &nchain, interp, arg, cur);
		if (r < 0)
			return r;
		snprintf(cur, sizeof cur, "%s", interp);
	}
}
