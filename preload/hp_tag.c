/*
 * Portable tagging core (see hp_tag.h): header layout and check value from
 * heapprof_format.h, nothing else. Allocation, locking and unwinding are the caller's.
 */
#include <string.h>

#include "hp_tag.h"

void *hp_tag_write(void *real, size_t offset, const struct hp_tag_info *info)
{
	unsigned char *user = (unsigned char *)real + offset;
	struct hp_hdr *h = (struct hp_hdr *)user - 1;
	size_t room = (offset - HP_HDR_SIZE) / sizeof(uintptr_t);
	unsigned n = info->nframes;
	uintptr_t *pcs;
	uint64_t x;

	if (n > HP_MAX_FRAMES)
		n = HP_MAX_FRAMES;
	if (n > room)
		n = (unsigned)room;
	pcs = (uintptr_t *)h - n;

	h->magic = 0;	/* never a valid magic beside a half-written header */
	h->size = info->size;
	h->birth = info->birth;
	h->offset = (uint32_t)offset;
	h->tid = info->tid;
	h->version = HP_FORMAT_VERSION;
	h->nframes = (uint8_t)n;
	h->wsize = (uint8_t)sizeof(uintptr_t);
	h->flags = 0;
	x = hp_check_head((uint64_t)(uintptr_t)user, h);
	for (unsigned i = 0; i < n; i++) {
		pcs[i] = info->pcs[i];
		x = hp_mix(x, (uint64_t)info->pcs[i]);
	}
	h->check = hp_check_final(x);
	h->magic = HP_MAGIC;
	return user;
}

void *hp_tag_real(const void *user)
{
	const struct hp_hdr *h = (const struct hp_hdr *)user - 1;
	uint64_t magic;

	memcpy(&magic, &h->magic, sizeof(magic));
	if (magic != HP_MAGIC)
		return NULL;
	/* A live magic next to a broken header means the program overran a block;
	 * the memory is not ours to judge: hand it back as the allocator gave it. */
	if (h->version != HP_FORMAT_VERSION || h->offset < HP_HDR_SIZE ||
	    h->offset % sizeof(uint64_t) != 0)
		return NULL;
	return (unsigned char *)user - h->offset;
}

void *hp_tag_block(const struct hp_tagger *t, void *real, size_t offset, uint64_t size)
{
	uintptr_t pcs[HP_MAX_FRAMES];
	struct hp_tag_info info = { .size = size };
	unsigned max = t->max_frames > HP_MAX_FRAMES ? HP_MAX_FRAMES : t->max_frames;

	if (t->backtrace)
		info.nframes = t->backtrace(pcs, max, t->arg);
	info.pcs = pcs;
	if (t->thread_id)
		info.tid = t->thread_id();
	if (t->now_ns)
		info.birth = t->now_ns();
	return hp_tag_write(real, offset, &info);
}
