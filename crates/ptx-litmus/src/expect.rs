//! Dat3M's recorded verdicts: `litmus/PTX/<dir>/<name>.litmus,<0|1>` per line,
//! `//` comments, 1 meaning PASS (allowed for `exists`, holds otherwise).

use std::collections::BTreeMap;

use crate::error::ExpectError;

/// The recorded verdicts, by path relative to the corpus folder
/// (`Manual/MP.litmus`).
#[derive(Clone, Debug, Default)]
pub struct Expected {
    /// Path → PASS bit.
    pub verdicts: BTreeMap<String, bool>,
}

impl Expected {
    /// Reads the CSV text.
    ///
    /// # Errors
    /// The line number and the line, for a line that is not `path,0|1`.
    pub fn parse(text: &str) -> Result<Self, ExpectError> {
        let mut verdicts = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with("//") {
                continue;
            }
            let bad = || ExpectError {
                line: i + 1,
                text: line.to_string(),
            };
            let (path, bit) = line.rsplit_once(',').ok_or_else(bad)?;
            let pass = match bit.trim() {
                "1" => true,
                "0" => false,
                _ => return Err(bad()),
            };
            let path = path.trim();
            let rel = path.strip_prefix("litmus/PTX/").unwrap_or(path);
            verdicts.insert(rel.to_string(), pass);
        }
        Ok(Expected { verdicts })
    }

    /// The recorded PASS bit for a test file, matched on the path's tail.
    #[must_use]
    pub fn lookup(&self, path: &std::path::Path) -> Option<bool> {
        let text = path.to_string_lossy().replace('\\', "/");
        self.verdicts
            .iter()
            .filter(|(k, _)| {
                text.ends_with(k.as_str()) && {
                    let cut = text.len() - k.len();
                    cut == 0 || text.as_bytes()[cut - 1] == b'/'
                }
            })
            .max_by_key(|(k, _)| k.len())
            .map(|(_, &v)| v)
    }
}
