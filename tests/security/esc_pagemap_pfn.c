/* esc_pagemap_pfn — learn physical addresses from /proc/self/pagemap.
 *
 * Attacks what moat serves of /proc (docs/filesystem.md "Synthetic /proc"):
 * pagemap is the kernel's own file, opened for the sandbox; its entries
 * hold the page frame number of each present page when the file was
 * opened with CAP_SYS_ADMIN — the physical addresses behind Rowhammer-
 * and side-channel attacks on the host.  moat opens it with its loop's
 * capabilities (no CAP_SYS_ADMIN), so the kernel zeroes them.  Natively as
 * root a present page shows its frame.
 */
#include "esc.h"
#include <stdint.h>
#include <sys/mman.h>

int main(void)
{
	long psz = sysconf(_SC_PAGESIZE);
	volatile char *page = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (page == MAP_FAILED)
		esc_unsupported("mmap: %s", esc_errname(errno));
	page[0] = 1;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		esc_held("open(/proc/self/pagemap): %s", esc_errname(errno));
		return esc_finish();
	}
	uint64_t e = 0;
	off_t at = (off_t)((uintptr_t)page / (uintptr_t)psz * sizeof e);
	if (pread(fd, &e, sizeof e, at) != (ssize_t)sizeof e)
		esc_held("pread(pagemap): %s", esc_errname(errno));
	else if (!(e >> 63))
		esc_unsupported("the page is not present (entry %#llx)", (unsigned long long)e);
	else if (e & ((1ULL << 55) - 1))
		esc_won("pagemap shows the page's frame number %#llx",
			(unsigned long long)(e & ((1ULL << 55) - 1)));
	else
		esc_held("pagemap: the page is present, its frame number zeroed");
	close(fd);
	return esc_finish();
}
