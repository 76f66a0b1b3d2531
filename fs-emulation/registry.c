/* The registry of granted fds: (st_dev, st_ino) -> virtual path.
 *
 * The kernel keeps the fd tables; this only gives meaning back to an fd
 * the sandbox passes where meaning is needed (a dirfd, fchdir,
 * /proc/self/fd/N).  An inode the registry does not know means nothing. */
#include "fs-emulation/vfs.h"

#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

struct reg_entry {
	dev_t dev;
	ino_t ino;
	char *vpath; /* NULL: empty slot */
	bool link;   /* a stand-in for the symlink at vpath (O_PATH|O_NOFOLLOW) */
};

static struct reg_entry *tab;
static size_t cap, used;

static size_t home(dev_t dev, ino_t ino)
{
	uint64_t key[2] = { (uint64_t)dev, (uint64_t)ino };
	return (size_t)(XXH3_64bits(key, sizeof key) & (cap - 1));
}

static struct reg_entry *find_slot(dev_t dev, ino_t ino)
{
	for (size_t i = home(dev, ino);; i = (i + 1) & (cap - 1))
		if (!tab[i].vpath || (tab[i].dev == dev && tab[i].ino == ino))
			return &tab[i];
}

static int grow(void)
{
	size_t ncap = cap ? cap * 2 : 1024;
	struct reg_entry *old = tab;
	size_t ocap = cap;
	struct reg_entry *n = calloc(ncap, sizeof *n);
	if (!n)
		return -1;
	tab = n;
	cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].vpath)
			*find_slot(old[i].dev, old[i].ino) = old[i];
	free(old);
	return 0;
}

static void put(dev_t dev, ino_t ino, const char *vpath, bool link);

/* Memfds (synthetic files, symlink stand-ins) are made per open, as often
 * as the sandbox likes: their meanings go to a bounded cache, one slot per
 * hash, where a newer one evicts an older one (whose fd then means nothing:
 * it fails closed).  The supervisor's memory stays bounded. */
#define MEMFD_SLOTS 4096
static struct reg_entry memfd_cache[MEMFD_SLOTS];

static bool is_memfd_dev(dev_t dev)
{
	static dev_t memfd_dev;
	static bool known;
	if (!known) {
		int fd = memfd_create("moat-registry", MFD_CLOEXEC);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0) {
			memfd_dev = st.st_dev;
			known = true;
		}
		if (fd >= 0)
			close(fd);
	}
	return known && dev == memfd_dev;
}

static struct reg_entry *memfd_slot(dev_t dev, ino_t ino)
{
	uint64_t key[2] = { (uint64_t)dev, (uint64_t)ino };
	return &memfd_cache[XXH3_64bits(key, sizeof key) % MEMFD_SLOTS];
}

static void cache_put(dev_t dev, ino_t ino, const char *vpath, bool link)
{
	struct reg_entry *e = memfd_slot(dev, ino);
	char *s = strdup(vpath);
	if (!s)
		return;
	free(e->vpath);
	*e = (struct reg_entry){ dev, ino, s, link };
}

static const struct reg_entry *cache_get(dev_t dev, ino_t ino)
{
	const struct reg_entry *e = memfd_slot(dev, ino);
	return e->vpath && e->dev == dev && e->ino == ino ? e : NULL;
}

void reg_put(dev_t dev, ino_t ino, const char *vpath)
{
	if (is_memfd_dev(dev))
		cache_put(dev, ino, vpath, false);
	else
		put(dev, ino, vpath, false);
}

void reg_put_link(dev_t dev, ino_t ino, const char *vpath)
{
	cache_put(dev, ino, vpath, true);
}

const char *reg_get_link(dev_t dev, ino_t ino)
{
	const struct reg_entry *e = cache_get(dev, ino);
	return e && e->link ? e->vpath : NULL;
}

static void put(dev_t dev, ino_t ino, const char *vpath, bool link)
{
	if ((used + 1) * 10 >= cap * 7 && grow() < 0)
		return; /* without memory the fd stays meaningless: lookups refuse */
	struct reg_entry *e = find_slot(dev, ino);
	if (e->vpath) {
		e->link = link;
		if (strcmp(e->vpath, vpath) == 0)
			return;
		char *s = strdup(vpath);
		if (!s)
			return;
		free(e->vpath);
		e->vpath = s;
		return;
	}
	e->vpath = strdup(vpath);
	if (!e->vpath)
		return;
	e->dev = dev;
	e->ino = ino;
	e->link = link;
	used++;
}

void reg_forget(dev_t dev, ino_t ino)
{
	if (!cap)
		return;
	struct reg_entry *e = find_slot(dev, ino);
	if (!e->vpath)
		return;
	free(e->vpath);
	e->vpath = NULL;
	used--;
	/* Linear probing: the entries after the hole that belong before it
	 * move back into it, so every lookup still finds its entry. */
	size_t i = (size_t)(e - tab);
	for (size_t j = (i + 1) & (cap - 1); tab[j].vpath; j = (j + 1) & (cap - 1)) {
		size_t h = home(tab[j].dev, tab[j].ino);
		bool move = i <= j ? (h <= i || h > j) : (h <= i && h > j);
		if (move) {
			tab[i] = tab[j];
			tab[j].vpath = NULL;
			i = j;
		}
	}
}

const char *reg_get(dev_t dev, ino_t ino)
{
	const struct reg_entry *c = cache_get(dev, ino);
	if (c)
		return c->vpath;
	if (!cap)
		return NULL;
	struct reg_entry *e = find_slot(dev, ino);
	return e->vpath;
}
