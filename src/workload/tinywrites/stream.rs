//! The write path of tinywrites: the program's writes go to the file
//! directly (one write(2) per write) or through a user-space buffer; with
//! compression they go the same way into a pipe, which a compressor thread
//! (flate2's gzip, zstd) reads and compresses into the file, as
//! `program | gzip > file` does. The write loop allocates nothing.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::os::fd::FromRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

use flate2::write::GzEncoder;

use crate::measure::cpu::CpuTimes;

/// The compression stage, with its level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compress {
    None,
    Gzip(u32),
    Zstd(i32),
}

impl Compress {
    pub fn parse(s: &str) -> Result<Compress, String> {
        let (name, level) = match s.split_once(':') {
            Some((n, l)) => (n, Some(l)),
            None => (s, None),
        };
        let bad = |range: &str| format!("`{s}`: the level of {name} is a whole number {range}");
        match (name, level) {
            ("none", None) => Ok(Compress::None),
            ("gzip", None) => Ok(Compress::Gzip(6)),
            ("zstd", None) => Ok(Compress::Zstd(3)),
            ("gzip", Some(l)) => match l.parse() {
                Ok(l) if l <= 9 => Ok(Compress::Gzip(l)),
                _ => Err(bad("from 0 to 9, like gzip:6")),
            },
            ("zstd", Some(l)) => match l.parse() {
                Ok(l) if (1..=19).contains(&l) => Ok(Compress::Zstd(l)),
                _ => Err(bad("from 1 to 19, like zstd:3")),
            },
            _ => Err(format!(
                "unknown compress `{s}`; compress is none, gzip:LEVEL or zstd:LEVEL"
            )),
        }
    }

    /// The output file's name.
    pub fn file_name(self) -> &'static str {
        match self {
            Compress::None => "tinywrites.out",
            Compress::Gzip(_) => "tinywrites.out.gz",
            Compress::Zstd(_) => "tinywrites.out.zst",
        }
    }
}

/// Where the (possibly compressed) stream lands: the file, or a buffer in
/// front of it.
pub enum Sink {
    Direct(File),
    Buffered(BufWriter<File>),
}

impl Sink {
    pub fn new(file: File, buffer: Option<usize>) -> Sink {
        match buffer {
            Some(cap) => Sink::Buffered(BufWriter::with_capacity(cap, file)),
            None => Sink::Direct(file),
        }
    }

    /// Flushes the buffer and gives the file back.
    pub fn into_file(self) -> io::Result<File> {
        match self {
            Sink::Direct(f) => Ok(f),
            Sink::Buffered(b) => b.into_inner().map_err(|e| e.into_error()),
        }
    }
}

impl Write for Sink {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Direct(f) => f.write(buf),
            Sink::Buffered(b) => b.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Direct(f) => f.flush(),
            Sink::Buffered(b) => b.flush(),
        }
    }
}

/// What the program asked for: how many bytes in how many writes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Written {
    pub bytes: u64,
    pub writes: u64,
}

/// Writes `total` bytes in writes of `write_size`, cycling through `pool`
/// (whose length is a multiple of `write_size`).
fn write_loop<W: Write>(
    w: &mut W,
    pool: &[u8],
    write_size: usize,
    total: u64,
    stop: &AtomicBool,
) -> io::Result<Written> {
    let mut done = Written::default();
    let mut at = 0usize;
    while done.bytes < total && !stop.load(Ordering::Relaxed) {
        let n = write_size.min((total - done.bytes) as usize);
        w.write_all(&pool[at..at + n])?;
        done.bytes += n as u64;
        done.writes += 1;
        at += write_size;
        if at >= pool.len() {
            at = 0;
        }
    }
    Ok(done)
}

/// Input buffer of the compressor: what it reads from the pipe at a time.
const PIPE_READ: usize = 64 << 10;

/// The whole write phase, until every byte reached the kernel. Without
/// compression the program writes into the sink. With it, the program
/// writes into a pipe and a compressor thread reads the pipe and writes the
/// compressed stream to the file: `program | gzip > file`, in one process.
/// Returns the file, what the program wrote and the compressor's CPU time.
pub fn write_stream(
    file: File,
    buffer: Option<usize>,
    compress: Compress,
    pool: &[u8],
    write_size: usize,
    total: u64,
    stop: &AtomicBool,
) -> io::Result<(File, Written, CpuTimes)> {
    if compress == Compress::None {
        let mut s = Sink::new(file, buffer);
        let done = write_loop(&mut s, pool, write_size, total, stop)?;
        return Ok((s.into_file()?, done, CpuTimes::default()));
    }
    let (rd, wr) = pipe()?;
    std::thread::scope(|scope| {
        let compressor = scope.spawn(move || compress_pipe(rd, file, compress));
        let mut s = Sink::new(wr, buffer);
        let written = write_loop(&mut s, pool, write_size, total, stop)
            .and_then(|done| s.into_file().map(|_| done));
        // The write end is closed here (or on error): the compressor sees EOF.
        let compressed = compressor
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the compressor thread panicked")));
        let (file, cpu) = compressed?;
        Ok((file, written?, cpu))
    })
}

/// A pipe's read and write ends, as files.
fn pipe() -> io::Result<(File, File)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds has room for the two descriptors pipe2 returns.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) })
}

/// The compressor: reads the pipe to its end and writes the compressed
/// stream to `file`, finished.
fn compress_pipe(mut rd: File, file: File, compress: Compress) -> io::Result<(File, CpuTimes)> {
    let cpu0 = CpuTimes::thread_now();
    let mut buf = vec![0u8; PIPE_READ];
    let file = match compress {
        Compress::Gzip(level) => {
            let mut e = GzEncoder::new(file, flate2::Compression::new(level));
            copy(&mut rd, &mut e, &mut buf)?;
            e.finish()?
        }
        Compress::Zstd(level) => {
            let mut e = zstd::Encoder::new(file, level)?;
            copy(&mut rd, &mut e, &mut buf)?;
            e.finish()?
        }
        Compress::None => file,
    };
    Ok((file, CpuTimes::thread_now().since(cpu0)))
}

fn copy<W: Write>(rd: &mut File, w: &mut W, buf: &mut [u8]) -> io::Result<()> {
    loop {
        match rd.read(buf) {
            Ok(0) => return Ok(()),
            Ok(n) => w.write_all(&buf[..n])?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compress_forms() {
        assert_eq!(Compress::parse("none"), Ok(Compress::None));
        assert_eq!(Compress::parse("gzip"), Ok(Compress::Gzip(6)));
        assert_eq!(Compress::parse("gzip:1"), Ok(Compress::Gzip(1)));
        assert_eq!(Compress::parse("zstd:19"), Ok(Compress::Zstd(19)));
        assert!(Compress::parse("gzip:10").unwrap_err().contains("0 to 9"));
        assert!(Compress::parse("zstd:0").is_err());
        assert!(Compress::parse("lz4").unwrap_err().contains("gzip:LEVEL"));
    }
}
