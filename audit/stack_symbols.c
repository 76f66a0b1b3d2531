/* The names of a stack's frames (stack_internal.h), looked up by moat
 * itself with libelf, in objects that pass stack_trusted() only: the
 * walker (stack_walker.c) answers with addresses, never with names. */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/stack_internal.h"

/* ---- symbols: libelf, the function that contains the address ----
 *
 * Distribution binaries keep only .dynsym: a static function has no
 * symbol, and the nearest exported one before it would be a wrong name.
 * So a name is given only when the address is inside the symbol's size;
 * otherwise the frame is the object and offset alone, which is exact. */

struct sym {
	uint64_t lo, hi;
	char *name;
};

struct obj {
	dev_t dev;
	ino_t ino;
	struct sym *sym;
	size_t nsym;
	struct {
		uint64_t off, filesz, vaddr;
	} load[8];
	int nload;
};

static struct obj objs[32];
static unsigned nobj;

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void obj_load(struct obj *o, int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return;
	size_t nph = 0;
	elf_getphdrnum(e, &nph);
	for (size_t i = 0; i < nph && o->nload < 8; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD)
			o->load[o->nload].off = ph.p_offset, o->load[o->nload].filesz = ph.p_filesz,
			o->load[o->nload++].vaddr = ph.p_vaddr;
	}
	size_t cap = 0;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(s, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(s, NULL);
		size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sy;
			if (!gelf_getsym(d, (int)i, &sy) || GELF_ST_TYPE(sy.st_info) != STT_FUNC ||
			    !sy.st_value || !sy.st_size)
				continue;
			const char *nm = elf_strptr(e, sh.sh_link, sy.st_name);
			if (!nm || !*nm)
				continue;
			if (o->nsym == cap) {
				cap = cap ? 2 * cap : 256;
				struct sym *ns = realloc(o->sym, cap * sizeof *ns);
				if (!ns)
					break;
				o->sym = ns;
			}
			o->sym[o->nsym++] = (struct sym){ sy.st_value, sy.st_value + sy.st_size,
							  strdup(nm) };
		}
	}
	elf_end(e);
	if (o->nsym)
		qsort(o->sym, o->nsym, sizeof *o->sym, sym_cmp);
}

static struct obj *obj_get(const char *file)
{
	struct stat st;
	if (!stack_trusted(file) || stat(file, &st) < 0)
		return NULL;
	for (unsigned i = 0; i < nobj && i < 32; i++)
		if (objs[i].dev == st.st_dev && objs[i].ino == st.st_ino)
			return &objs[i];
	struct obj *o = &objs[nobj++ % 32];
	for (size_t i = 0; i < o->nsym; i++)
		free(o->sym[i].name);
	free(o->sym);
	memset(o, 0, sizeof *o);
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		obj_load(o, fd);
		close(fd);
	}
	return o;
}

/* The function of `file` holding file offset `off`, and the offset in it. */
static const char *sym_lookup(const char *file, uint64_t off, uint64_t *in)
{
	struct obj *o = obj_get(file);
	if (!o || !o->nsym)
		return NULL;
	uint64_t va = 0;
	int k;
	for (k = 0; k < o->nload; k++)
		if (off >= o->load[k].off && off < o->load[k].off + o->load[k].filesz) {
			va = off - o->load[k].off + o->load[k].vaddr;
			break;
		}
	if (k == o->nload)
		return NULL;
	size_t lo = 0, hi = o->nsym;
	while (lo < hi) { /* the last symbol starting at or below va */
		size_t mid = (lo + hi) / 2;
		if (o->sym[mid].lo <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || va >= o->sym[lo - 1].hi)
		return NULL;
	*in = va - o->sym[lo - 1].lo;
	return o->sym[lo - 1].name;
}

/* "name+0x14 (libc.so.6+0x10e1b4)" or "libc.so.6+0x10e1b4" for an address of
 * a mapped file, "0x7f00..." for anything else (a JIT's code). */
void stack_frame_name(const struct stack_maps *maps, uint64_t ip, char *buf, size_t len)
{
	static bool init;
	if (!init) {
		elf_version(EV_CURRENT);
		init = true;
	}
	int m = stack_map_of(maps, ip);
	if (m < 0) {
		snprintf(buf, len, "0x%" PRIx64, ip);
		return;
	}
	const char *file = maps->map[m].path, *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	uint64_t foff = ip - maps->map[m].lo + maps->map[m].off, in = 0;
	const char *fn = sym_lookup(file, foff, &in);
	if (fn)
		snprintf(buf, len, "%s+0x%" PRIx64 " (%s+0x%" PRIx64 ")", fn, in, base, foff);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, base, foff);
}
