//! Content-keyed build outputs on disk, shared by processes and threads.
//!
//! The test suite builds every fixture once per test binary (the oracle,
//! the shape, race and snapshot suites, the service): rustc on the same
//! text, libNVVM on the same NVVM IR, rustc on the same host program, with
//! the same output each time. A [`Store`] keeps such an output under a
//! [`KeyHasher`] digest of everything that decides it, so a later build with
//! the same inputs reads it back instead of running the tool again.
//!
//! The store is opt-in: [`Store::from_env`] gives one only while
//! [`CACHE_VAR`] names a folder, which `ci/test.sh` sets for its own run
//! (and empties first); the processes the tests start inherit it. A bare
//! `cargo test`, and the CLI or the service started by a user, never see
//! it. Callers keep successes only: a failure or a timeout is not a
//! property of the inputs, and a test of a failure must meet the tool.
//!
//! Every write goes to a name private to its process and thread and is then
//! renamed, so a reader sees a whole entry or none; a lost write loses
//! nothing but the time the next build takes. Bytes are kept gzipped (the
//! run's MIR was 2 GB of text raw), whose CRC makes a damaged entry a miss;
//! programs are kept as they are, to be linked out and run.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use sha2::{Digest, Sha256};

/// The variable naming the folder of the test run's stores, one sub-folder
/// per kind of output.
pub const CACHE_VAR: &str = "BUILD_OUTPUT_CACHE";

/// A SHA-256 over fields, each fed with its length first, so that no two
/// sequences of fields hash alike.
pub struct KeyHasher(Sha256);

impl KeyHasher {
    /// A hasher that starts with `format`: the kind of output and the
    /// version of its key, so that a new key format misses old entries.
    pub fn new(format: &str) -> KeyHasher {
        let mut h = KeyHasher(Sha256::new());
        h.field(format.as_bytes());
        h
    }

    /// Feeds one field.
    pub fn field(&mut self, bytes: &[u8]) {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    /// The digest, in hex: the key.
    pub fn finish(self) -> String {
        hex::encode(self.0.finalize())
    }
}

/// One folder of outputs, one file per key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The store in `dir` (made on the first write).
    pub fn at(dir: impl Into<PathBuf>) -> Store {
        Store { dir: dir.into() }
    }

    /// The test run's store for `kind` of output (`$BUILD_OUTPUT_CACHE/kind`),
    /// or `None` when [`CACHE_VAR`] is unset or empty.
    pub fn from_env(kind: &str) -> Option<Store> {
        std::env::var_os(CACHE_VAR)
            .filter(|v| !v.is_empty())
            .map(|v| Store::at(PathBuf::from(v).join(kind)))
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry for `key` is, whether or not it exists.
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir.join(key)
    }

    /// The bytes kept under `key` by [`Store::write`], if any; an entry
    /// that does not inflate (cut short, or not ours) reads as none.
    pub fn read(&self, key: &str) -> Option<Vec<u8>> {
        let file = std::fs::File::open(self.path(key)).ok()?;
        let mut bytes = Vec::new();
        GzDecoder::new(io::BufReader::new(file))
            .read_to_end(&mut bytes)
            .ok()?;
        Some(bytes)
    }

    /// Keeps `bytes` under `key`, deflated: rustc's MIR of one fixture can
    /// be 80 MB of text, and shrinks about tenfold.
    ///
    /// # Errors
    /// When the folder or the file cannot be written.
    pub fn write(&self, key: &str, bytes: &[u8]) -> io::Result<()> {
        self.publish(key, |tmp| {
            let mut gz = GzEncoder::new(std::fs::File::create(tmp)?, Compression::fast());
            gz.write_all(bytes)?;
            gz.finish().map(drop)
        })
    }

    /// Keeps a copy of the file `from` under `key` (a built program).
    ///
    /// # Errors
    /// When `from` cannot be read or the copy cannot be written.
    pub fn copy_in(&self, key: &str, from: &Path) -> io::Result<()> {
        self.publish(key, |tmp| std::fs::copy(from, tmp).map(|_| ()))
    }

    /// Puts the entry for `key` at `to` (a new path), as a hard link where
    /// the file system allows, else as a copy; whether there was one.
    ///
    /// A link opens no file for writing: a program copied and then run at
    /// once can fail with "text file busy" when another thread of this
    /// process forks while the copy is open.
    pub fn copy_out(&self, key: &str, to: &Path) -> bool {
        let from = self.path(key);
        std::fs::hard_link(&from, to).is_ok() || std::fs::copy(&from, to).is_ok()
    }

    /// Writes the entry under a name private to this process and thread,
    /// then renames it into place.
    fn publish(&self, key: &str, write: impl FnOnce(&Path) -> io::Result<()>) -> io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let tmp = self.dir.join(format!(
            ".{key}.{}.{:?}.tmp",
            std::process::id(),
            std::thread::current().id()
        ));
        let written = write(&tmp).and_then(|()| std::fs::rename(&tmp, self.path(key)));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(fields: &[&[u8]]) -> String {
        let mut h = KeyHasher::new("test v1");
        for f in fields {
            h.field(f);
        }
        h.finish()
    }

    #[test]
    fn fields_are_delimited_and_ordered() {
        assert_eq!(key(&[b"ab", b"c"]), key(&[b"ab", b"c"]));
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]), "a moved border");
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"c", b"ab"]), "another order");
        assert_ne!(key(&[b"ab"]), key(&[b"ab", b""]), "an empty field");
        let other = {
            let mut h = KeyHasher::new("test v2");
            h.field(b"ab");
            h.field(b"c");
            h.finish()
        };
        assert_ne!(key(&[b"ab", b"c"]), other, "another format");
    }

    #[test]
    fn an_entry_reads_back_and_a_missing_one_is_none() {
        let dir = std::env::temp_dir().join(format!("build-cache-test-{}", std::process::id()));
        let store = Store::at(&dir);
        let k = key(&[b"x"]);
        assert_eq!(store.read(&k), None);
        store.write(&k, b"output").expect("written");
        assert_eq!(store.read(&k).as_deref(), Some(&b"output"[..]));
        // A file in, a file out.
        let src = dir.join("program");
        std::fs::write(&src, b"\x7fELF").expect("source");
        let k2 = key(&[b"y"]);
        store.copy_in(&k2, &src).expect("copied in");
        let out = dir.join("copy");
        assert!(store.copy_out(&k2, &out));
        assert_eq!(std::fs::read(&out).expect("copy"), b"\x7fELF");
        assert!(!store.copy_out(&key(&[b"z"]), &out));
        // No temporary file is left behind.
        let leftovers = std::fs::read_dir(&dir)
            .expect("dir")
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .count();
        assert_eq!(leftovers, 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn entries_are_kept_deflated_and_a_damaged_one_is_a_miss() {
        let dir = std::env::temp_dir().join(format!("build-cache-gz-{}", std::process::id()));
        let store = Store::at(&dir);
        let text = "bb0: { _0 = const 1_u32; return; }\n".repeat(4096);
        let k = key(&[b"mir"]);
        store.write(&k, text.as_bytes()).expect("written");
        let on_disk = std::fs::read(store.path(&k)).expect("entry");
        assert!(
            on_disk.len() * 10 < text.len(),
            "{} bytes kept for {} of text",
            on_disk.len(),
            text.len()
        );
        assert_eq!(store.read(&k).as_deref(), Some(text.as_bytes()));
        // Cut short (a full disk, a killed writer outside the rename): the
        // trailer's length and CRC are missing, and the entry is a miss.
        std::fs::write(store.path(&k), &on_disk[..on_disk.len() - 4]).expect("cut");
        assert_eq!(store.read(&k), None);
        // Not an entry of ours at all.
        std::fs::write(store.path(&k), text.as_bytes()).expect("raw");
        assert_eq!(store.read(&k), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_run_store_is_a_folder_per_kind_under_the_variable() {
        // Read-only on the environment: whatever the variable is here, the
        // store follows it.
        match std::env::var_os(CACHE_VAR).filter(|v| !v.is_empty()) {
            Some(v) => assert_eq!(
                Store::from_env("rustc").map(|s| s.dir().to_path_buf()),
                Some(PathBuf::from(v).join("rustc"))
            ),
            None => assert_eq!(Store::from_env("rustc"), None),
        }
    }
}
