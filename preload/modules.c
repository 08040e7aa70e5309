/*
 * Module records (include/heapprof_format.h): when dlclose() really unloads a shared
 * object, its path, build-id, load bias and text range are written to the table's
 * memory, so that a report on a later dump still names the frames that pointed into
 * a plugin long gone (gperftools and jemalloc cannot). Runs in dlclose, never in malloc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof_format.h"
#include "modules.h"
#include "table.h"

struct module_rec {
	uint64_t magic, check;
	uint64_t bias, text_start, text_end, flags;
	unsigned char build_id[24];
	char path[312];
};

_Static_assert(sizeof(struct module_rec) == HP2_MODULE_SIZE, "module record");

struct find {
	uintptr_t bias;
	struct module_rec *m;
	int found;
};

static void read_build_id(struct module_rec *m, uintptr_t bias, const ElfW(Phdr) *ph)
{
	const unsigned char *p = (const unsigned char *)(bias + ph->p_vaddr);
	const unsigned char *end = p + ph->p_memsz;

	while (p + sizeof(ElfW(Nhdr)) <= end) {
		const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
		size_t name = (n->n_namesz + 3) & ~(size_t)3, desc = (n->n_descsz + 3) & ~(size_t)3;
		const unsigned char *d = p + sizeof(*n) + name;

		if (d + desc > end)
			return;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(p + sizeof(*n), "GNU", 4)) {
			size_t len = n->n_descsz < sizeof(m->build_id) ? n->n_descsz : sizeof(m->build_id);

			memcpy(m->build_id, d, len);
			m->flags |= (uint64_t)len << 8;
			return;
		}
		p = d + desc;
	}
}

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;

	(void)size;
	if (info->dlpi_addr != f->bias || f->found)
		return 0;
	f->found = 1;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && !f->m->text_end) {
			f->m->text_start = info->dlpi_addr + ph->p_vaddr;
			f->m->text_end = f->m->text_start + ph->p_memsz;
		} else if (ph->p_type == PT_NOTE && !(f->m->flags >> 8)) {
			read_build_id(f->m, info->dlpi_addr, ph);
		}
	}
	return 1;
}

/*
 * A library opened by a relative path keeps that path as its name, which means
 * nothing to a report made elsewhere: the file the kernel mapped for its text
 * (/proc/self/map_files, right whatever the directory is now), else the path from the
 * current directory. Left as it is if neither works.
 */
static void absolute_path(struct module_rec *m)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	char link[80], buf[PATH_MAX];
	ssize_t n;

	if (m->path[0] == '/')
		return;
	snprintf(link, sizeof(link), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)(m->text_start & ~(page - 1)),
		 (unsigned long)((m->text_end + page - 1) & ~(page - 1)));
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n > 0 && buf[0] == '/')
		buf[n] = 0;
	else if (!realpath(m->path, buf))
		return;
	if (strlen(buf) < sizeof(m->path))
		strcpy(m->path, buf);
}

void *modules_before_close(void *handle)
{
	struct link_map *lm = NULL;
	struct module_rec *m;
	struct find f;

	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name || !lm->l_name[0])
		return NULL;
	m = table_alloc_record(sizeof(*m), HP2_OWN_RECORDS);
	if (!m)
		return NULL;
	memset(m, 0, sizeof(*m));
	m->bias = lm->l_addr;
	strncpy(m->path, lm->l_name, sizeof(m->path) - 1);
	f = (struct find){ lm->l_addr, m, 0 };
	dl_iterate_phdr(find_module, &f);
	if (!f.found || !m->text_end)
		return NULL;
	absolute_path(m);
	return m;
}

void modules_after_close(void *rec, int (*real_dlclose)(void *))
{
	struct module_rec *m = rec;
	void *again;

	if (!m)
		return;
	again = dlopen(m->path, RTLD_LAZY | RTLD_NOLOAD);
	if (again) {
		real_dlclose(again);	/* still loaded (another handle holds it) */
		return;
	}
	m->flags |= HP2_MOD_UNLOADED;
	m->check = table_record_check(m, &m->bias, (HP2_MODULE_SIZE - 16) / 8);
	__atomic_store_n(&m->magic, HP2_MODULE_MAGIC, __ATOMIC_RELEASE);
}
