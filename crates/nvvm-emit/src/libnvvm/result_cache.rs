//! libNVVM's successful results, kept for the rest of a test run.
//!
//! Every suite of the test run compiles the same fixtures' NVVM IR with the
//! same options (the oracle, the shape, snapshot and PTX-reader suites, the
//! service the tests start): the same PTX every time. While the test run's
//! [`build_cache`] store is on (`ci/test.sh` turns it on, nothing else
//! does), a verification that passed and a compilation that succeeded are
//! kept under a digest of the library, the options and the IR; a failure
//! is never kept, so every test of a refusal meets libNVVM itself.

use build_cache::{KeyHasher, Store};

use super::Libnvvm;

/// An entry of the store: where a result is or will be kept.
pub(super) struct Entry {
    store: Store,
    key: String,
}

impl Entry {
    /// The entry for running `stage` (verify, compile) with `args` on `ir`,
    /// or `None` when the store is off.
    pub(super) fn new(nvvm: &Libnvvm, stage: &str, args: &[String], ir: &str) -> Option<Entry> {
        let store = Store::from_env("libnvvm")?;
        let mut h = KeyHasher::new("nvvm-emit libNVVM result v1");
        h.field(nvvm.path.display().to_string().as_bytes());
        let library_len = std::fs::metadata(&nvvm.path).map_or(0, |m| m.len());
        h.field(&library_len.to_le_bytes());
        h.field(format!("{:?} {:?}", nvvm.version, nvvm.ir_version).as_bytes());
        h.field(nvvm.libdevice_path().display().to_string().as_bytes());
        h.field(stage.as_bytes());
        h.field(&(args.len() as u64).to_le_bytes());
        for a in args {
            h.field(a.as_bytes());
        }
        h.field(ir.as_bytes());
        Some(Entry {
            store,
            key: h.finish(),
        })
    }

    /// The kept output and log, if there are.
    pub(super) fn load(&self) -> Option<(Vec<u8>, String)> {
        decode(&self.store.read(&self.key)?)
    }

    /// Keeps `output` and `log`; failing to keep them loses nothing.
    pub(super) fn keep(&self, output: &[u8], log: &str) {
        let _ = self.store.write(&self.key, &encode(output, log));
    }
}

/// The output's length, the output, then the log.
fn encode(output: &[u8], log: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(8 + output.len() + log.len());
    bytes.extend_from_slice(&(output.len() as u64).to_le_bytes());
    bytes.extend_from_slice(output);
    bytes.extend_from_slice(log.as_bytes());
    bytes
}

fn decode(bytes: &[u8]) -> Option<(Vec<u8>, String)> {
    let (len, rest) = bytes.split_first_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    if len > rest.len() {
        return None;
    }
    let (output, log) = rest.split_at(len);
    Some((output.to_vec(), String::from_utf8(log.to_vec()).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_decodes_to_what_was_encoded() {
        let e = encode(b"//\n.version 8.5\n", "warning: x");
        assert_eq!(
            decode(&e),
            Some((b"//\n.version 8.5\n".to_vec(), "warning: x".to_owned()))
        );
        assert_eq!(decode(&encode(b"", "")), Some((Vec::new(), String::new())));
        // A torn or foreign file is no entry.
        assert_eq!(decode(&e[..5]), None);
        assert_eq!(decode(&e[..12]), None);
    }
}
