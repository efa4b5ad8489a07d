//! fio's mmap engine: the job's file mapped shared into memory; a read is a
//! memcpy from the mapping into the buffer, a write the reverse, and a sync
//! is msync(MS_SYNC) of the whole mapping. The page cache is always in the
//! data path unless the file sits on a DAX filesystem, so `direct = true`
//! is refused elsewhere rather than silently ignored.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use anyhow::{bail, Context, Result};

use super::engine::SyncEngine;
use super::job::{Advice, JobSpec, Rw};

/// A multiple of every page size Linux uses (4 KiB to 64 KiB): an offset
/// rounded down to it is page-aligned on any of them.
const PAGE: usize = 65536;

/// STATX_ATTR_DAX from linux/stat.h: the file's data is accessed directly.
const STATX_ATTR_DAX: u64 = 0x0020_0000;

pub struct Mmap<'a> {
    ptr: *mut u8,
    len: usize,
    path: &'a Path,
    file: File,
}

impl<'a> Mmap<'a> {
    /// Maps the job's file, `offset + size` bytes (grown to that length for
    /// sequential writes).
    pub fn new(file: File, spec: &JobSpec, path: &'a Path) -> Result<Mmap<'a>> {
        if spec.direct && !is_dax(&file) {
            bail!(
                "ioengine = \"mmap\" cannot bypass the page cache of {}: direct = true needs a DAX filesystem; set direct = false or use psync or io_uring",
                path.display()
            );
        }
        ensure_length(&file, spec, path)?;
        let len =
            usize::try_from(spec.file_len()).context("offset + size does not fit in memory")?;
        let prot = if spec.rw.writes() {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: a fresh shared mapping of an open file descriptor; the kernel
        // chooses the address and we check for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("mapping {} ({len} bytes)", path.display()));
        }
        let advice = match spec.advice {
            Advice::None => None,
            Advice::Random => Some(libc::MADV_RANDOM),
            Advice::Sequential => Some(libc::MADV_SEQUENTIAL),
        };
        if let Some(advice) = advice {
            // SAFETY: ptr..ptr+len is the mapping just created; advice is only a hint.
            unsafe { libc::madvise(ptr, len, advice) };
        }
        Ok(Mmap {
            ptr: ptr.cast(),
            len,
            path,
            file,
        })
    }

    #[inline]
    fn check(&self, off: u64, n: usize) -> Result<usize> {
        match (off as usize).checked_add(n) {
            Some(end) if end <= self.len => Ok(off as usize),
            _ => bail!(
                "offset {off} + {n} bytes lies outside the {}-byte mapping of {}",
                self.len,
                self.path.display()
            ),
        }
    }
}

/// Sequential writes create the file: give it its full length before mapping.
/// Otherwise the file must already be as long as `size` (a shorter file
/// would raise SIGBUS on access).
fn ensure_length(file: &File, spec: &JobSpec, path: &Path) -> Result<()> {
    if spec.rw == Rw::Write {
        return file
            .set_len(spec.file_len())
            .with_context(|| format!("extending {} to {} bytes", path.display(), spec.file_len()));
    }
    let have = file
        .metadata()
        .with_context(|| format!("reading the length of {}", path.display()))?
        .len();
    if have < spec.file_len() {
        bail!(
            "{} has {have} bytes, fewer than offset + size = {}; remove it so that it is laid out again",
            path.display(),
            spec.file_len()
        );
    }
    Ok(())
}

fn is_dax(file: &File) -> bool {
    // SAFETY: statx fills a zeroed struct for the descriptor (AT_EMPTY_PATH with an empty path).
    unsafe {
        let mut st: libc::statx = std::mem::zeroed();
        let rc = libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            0,
            &mut st,
        );
        rc == 0 && st.stx_attributes & STATX_ATTR_DAX != 0
    }
}

impl SyncEngine for Mmap<'_> {
    #[inline]
    fn read(&mut self, buf: &mut [u8], off: u64) -> Result<()> {
        let o = self.check(off, buf.len())?;
        // SAFETY: o..o+len lies inside the mapping (checked), which stays valid
        // while self lives, and cannot overlap the heap buffer.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(o), buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }

    #[inline]
    fn write(&mut self, buf: &[u8], off: u64) -> Result<()> {
        let o = self.check(off, buf.len())?;
        // SAFETY: as in read; the mapping is writable because the job writes.
        unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), self.ptr.add(o), buf.len()) };
        Ok(())
    }

    /// Unmaps the region's pages from this process (MADV_DONTNEED on a
    /// shared mapping loses no data: dirty pages stay in the page cache),
    /// then drops the clean ones from the page cache.
    fn invalidate(&mut self, off: u64, len: u64) -> Result<()> {
        let o = self.check(off, len as usize)?;
        // madvise wants a page-aligned start; the mapping begins on a page.
        let start = o / PAGE * PAGE;
        // SAFETY: start..o+len lies inside our mapping (checked, and the
        // mapping starts at offset 0); MADV_DONTNEED on a shared file
        // mapping only drops this process's page tables.
        unsafe {
            libc::madvise(
                self.ptr.add(start).cast(),
                o + len as usize - start,
                libc::MADV_DONTNEED,
            )
        };
        super::cache::drop_cached(&self.file, off, len, self.path)
    }

    fn sync(&mut self) -> Result<()> {
        // SAFETY: ptr..ptr+len is our mapping.
        let rc = unsafe { libc::msync(self.ptr.cast(), self.len, libc::MS_SYNC) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("msync of {}", self.path.display()));
        }
        Ok(())
    }
}

impl Drop for Mmap<'_> {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping created in new.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}
