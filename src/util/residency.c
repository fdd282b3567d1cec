/* residency.c — releases the pages of the loaded objects' read-only segments (see
 * residency.h), found with dl_iterate_phdr and dropped with MADV_DONTNEED: on a private
 * file mapping that was never written it unmaps the page, and the page cache keeps it.
 * It never touches a segment the program may write, so no relocation, variable or copy
 * of a page is lost. */
#include "util/residency.h"

#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct release {
    uintptr_t page, vdso;
    size_t bytes;
    int err;
} release;

static int holds(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= start && addr - start < ph->p_memsz) return 1;
    }
    return 0;
}

/* Whether the loader wrote into the object's code to relocate it (DT_TEXTREL): its pages
 * are then private copies, which dropping would undo. */
static int relocates_text(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_DYNAMIC) continue;
        for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
             d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL)))
                return 1;
    }
    return 0;
}

static int release_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    release *r = arg;
    if ((r->vdso && holds(info, r->vdso)) || relocates_text(info)) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) || ph->p_filesz < ph->p_memsz) continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
        start = (start + r->page - 1) & ~(r->page - 1); /* whole pages inside the segment */
        end &= ~(r->page - 1);
        if (end <= start) continue;
        if (madvise((void *)start, end - start, MADV_DONTNEED) != 0)
            r->err = errno;
        else
            r->bytes += end - start;
    }
    return 0;
}

int residency_release_readonly(size_t *bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    release r = {.page = page > 0 ? (uintptr_t)page : 4096,
                 .vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR)};
    dl_iterate_phdr(release_object, &r);
    if (bytes) *bytes = r.bytes;
    if (r.err) {
        errno = r.err;
        return -1;
    }
    return 0;
}
