//! The data files between the harness and a host program: the numbers
//! (lengths, scalars, launch shapes, constant bytes) and buffers it reads,
//! and the readback it writes. The program's text holds none of them.

use std::io::Write as _;
use std::path::Path;

use super::{HostError, Readback};
use crate::fixture::{Arg, Fixture};

/// Writes the manifest's numbers to `path` as little-endian `u64`s, in the
/// order the host program reads them: each buffer's length and readback
/// count; then per launch, each constant-memory write (its byte count and
/// one number per byte), each scalar argument's bits in order (a 128-bit
/// one as two numbers, the low half first; an aggregate by value as its
/// length, one number per byte and each pointer field's offset), the grid,
/// the block and the bytes of dynamic shared memory. So the program's text
/// holds no number of the manifest, and a change of grid, lengths or
/// scalars reuses its build.
///
/// # Errors
/// When the file cannot be written, or a scalar argument does not resolve.
pub fn write_numbers(f: &Fixture, path: &Path) -> Result<(), HostError> {
    let mut out = Vec::new();
    let mut push = |n: u64| out.extend_from_slice(&n.to_le_bytes());
    for b in &f.manifest.buffer {
        push(b.len as u64);
        push(b.readback as u64);
    }
    for l in &f.manifest.launch {
        for c in &l.constants {
            let bytes = c.bytes().ok_or_else(|| {
                HostError::Generate(format!(
                    "constant `{}`: a value is not exactly a {}",
                    c.name,
                    c.ty.rust()
                ))
            })?;
            push(bytes.len() as u64);
            bytes.iter().for_each(|&b| push(u64::from(b)));
        }
        for a in &l.args {
            match a
                .resolve()
                .map_err(|e| HostError::Generate(e.to_string()))?
            {
                Arg::Scalar(_, bits) => push(bits),
                Arg::Wide(_, bits) => {
                    push(bits as u64);
                    push((bits >> 64) as u64);
                }
                Arg::ByValue(a) => {
                    push(a.bytes.len() as u64);
                    a.bytes.iter().for_each(|&b| push(u64::from(b)));
                    a.buffers.iter().for_each(|&(at, _)| push(at as u64));
                }
                Arg::Buffer(_) => {}
            }
        }
        for d in l.grid.iter().chain(&l.block) {
            push(u64::from(*d));
        }
        push(u64::from(l.shared_bytes));
    }
    std::fs::write(path, out)?;
    Ok(())
}

/// Writes every buffer's initial bytes, in manifest order, to `path`.
pub fn write_buffers(f: &Fixture, path: &Path) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    for b in &f.manifest.buffer {
        let n = b.ty.size();
        for i in 0..b.len {
            w.write_all(&b.initial_bit(i).to_le_bytes()[..n])?;
        }
    }
    w.flush()
}

/// Reads `readback.bin` back into each read-back buffer's bit patterns.
pub fn parse_readback(f: &Fixture, bytes: &[u8]) -> Result<Readback, HostError> {
    let mut out = Vec::new();
    let mut at = 0usize;
    for b in f.manifest.buffer.iter().filter(|b| b.readback > 0) {
        let n = b.ty.size();
        let end = at + b.readback * n;
        let chunk = bytes.get(at..end).ok_or_else(|| {
            HostError::Readback(format!(
                "{} bytes, too short for buffer `{}`",
                bytes.len(),
                b.name
            ))
        })?;
        let vals = chunk.chunks_exact(n).map(le_word).collect();
        out.push((b.name.clone(), vals));
        at = end;
    }
    if at != bytes.len() {
        return Err(HostError::Readback(format!(
            "{} bytes, {} more than the manifest reads back",
            bytes.len(),
            bytes.len() - at
        )));
    }
    Ok(out)
}

/// One element's little-endian bytes (1 to 8 of them) as the `u64` bit
/// pattern a readback holds.
pub(crate) fn le_word(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(w)
}
