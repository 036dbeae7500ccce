//! What a dependency build compiled is what crates.io shipped.
//!
//! A crate's build script runs before the crate compiles and can write code
//! that the crate then includes (`include!(concat!(env!("OUT_DIR"), ..))`).
//! Nobody reviewed that code, and the MIR would show it without a source to
//! point at, so such a crate is refused by name. rustc's dep-info (`.d`,
//! beside each crate's MIR) lists every file a crate compiled or included;
//! each must be a file of the crate's vendored package, listed in the
//! package's `.cargo-checksum.json` (which `cargo vendor` writes from the
//! crates.io archive), as a plain file with that checksum. So a file outside
//! the package (`OUT_DIR`, or a path that leaves it through `..`), a file a
//! build script added to its own package, and a vendored file it changed
//! are all refused, while crates built for other targets, and files no
//! `mod` or `include!` reaches, are never looked at.
//!
//! Left out, and said so in the architecture notes: values a build script
//! passes through `cargo:rustc-env` (read with `env!`), files a proc macro
//! reads while it expands, which dep-info does not list, and a hostile
//! build script that rewrites another crate's dep-info or MIR in the
//! (writable) target folder after rustc wrote them.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::{BuiltDeps, DepCrate, DepsError};

/// Refuses a build whose crates compiled a file that their vendored
/// packages do not hold unchanged. Run on a new build and on a kept one.
pub(crate) fn refuse_unvetted_sources(built: &BuiltDeps) -> Result<(), DepsError> {
    for c in &built.crates {
        vet_crate(built, c)?;
    }
    Ok(())
}

fn vet_crate(built: &BuiltDeps, c: &DepCrate) -> Result<(), DepsError> {
    let dep_info_rel = c.mir.with_extension("d");
    let dep_info = built.path(&dep_info_rel);
    let text = std::fs::read_to_string(&dep_info)
        .map_err(|e| DepsError::Io(format!("{}: {e}", dep_info.display())))?;
    let unreadable = |why: &str| DepsError::Tool(format!("{}: {why}", dep_info.display()));
    let (output, sources) = dep_info_rule(&text).ok_or_else(|| unreadable("no rule"))?;
    if sources.is_empty() {
        return Err(unreadable("no source files"));
    }
    // The folder the build ran in, as rustc saw it (`/work` when confined):
    // the rule's output less its path inside the build.
    let prefix = output
        .to_str()
        .zip(dep_info_rel.to_str())
        .and_then(|(o, rel)| o.strip_suffix(rel))
        .map(|p| PathBuf::from(p.trim_end_matches('/')))
        .ok_or_else(|| unreadable("its rule names another output"))?;
    let checksums = package_checksums(built, c)?;
    let package = built.path(&c.src_dir);
    let krate = package_folder_name(c);
    for source in &sources {
        let in_package = source
            .strip_prefix(&prefix)
            .ok()
            .and_then(normalized)
            .and_then(|rel| rel.strip_prefix(&c.src_dir).ok().map(Path::to_path_buf));
        let listed = in_package
            .as_ref()
            .and_then(|rel| Some((rel, checksums.get(rel.to_str()?)?)));
        let Some((rel, checksum)) = listed else {
            return Err(DepsError::GeneratedCode {
                krate: krate.clone(),
                file: reader_of_out_dir(built, c, &sources, &prefix),
                generated: out_dir_relative(source.strip_prefix(&prefix).unwrap_or(source)),
            });
        };
        let path = package.join(rel);
        let plain = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
        let same = plain
            && std::fs::read(&path)
                .is_ok_and(|bytes| hex::encode(Sha256::digest(&bytes)) == *checksum);
        if !same {
            return Err(DepsError::ModifiedSource {
                file: format!("{krate}/{}", rel.display()),
                krate,
            });
        }
    }
    Ok(())
}

/// The vendored package's folder name (`typenum-1.15.0`).
fn package_folder_name(c: &DepCrate) -> String {
    c.src_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| c.name.clone())
}

/// The `files` map of a vendored package's `.cargo-checksum.json`: path
/// (with `/`) → SHA-256 in hex.
fn package_checksums(
    built: &BuiltDeps,
    c: &DepCrate,
) -> Result<BTreeMap<String, String>, DepsError> {
    #[derive(serde::Deserialize)]
    struct Checksums {
        files: BTreeMap<String, String>,
    }
    let path = built.path(&c.src_dir).join(".cargo-checksum.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        DepsError::Tool(format!(
            "dependency crate `{}` has no checksums of a vendored package ({}: {e}): only \
             crates.io packages, vendored, are built for the device",
            c.name,
            path.display()
        ))
    })?;
    serde_json::from_str::<Checksums>(&text)
        .map(|c| c.files)
        .map_err(|e| DepsError::Io(format!("{}: {e}", path.display())))
}

/// The crate's own file that names `OUT_DIR`, for the diagnostic.
fn reader_of_out_dir(
    built: &BuiltDeps,
    c: &DepCrate,
    sources: &[PathBuf],
    prefix: &Path,
) -> String {
    let vendor = c.src_dir.parent().unwrap_or(Path::new(""));
    sources
        .iter()
        .filter_map(|s| normalized(s.strip_prefix(prefix).ok()?))
        .filter(|rel| rel.starts_with(&c.src_dir))
        .find(|rel| std::fs::read_to_string(built.path(rel)).is_ok_and(|t| t.contains("OUT_DIR")))
        .map(|rel| {
            rel.strip_prefix(vendor)
                .unwrap_or(&rel)
                .display()
                .to_string()
        })
        .unwrap_or_else(|| "no file of the crate".into())
}

/// A relative path with its `.` and `..` taken out, or `None` when it
/// climbs out of its start or is not relative.
fn normalized(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// The first rule of a dep-info file: its output and the files it was built
/// from, in order (Makefile syntax, one rule per line, `\ ` for a space in a
/// path; rustc writes one rule per output, all with the same files).
fn dep_info_rule(text: &str) -> Option<(PathBuf, Vec<PathBuf>)> {
    let rule = text
        .lines()
        .find(|l| !l.starts_with('#') && l.contains(": "))?;
    let mut words = split_escaped(rule);
    let output = words.next()?;
    let output = PathBuf::from(output.strip_suffix(':')?);
    Some((output, words.map(PathBuf::from).collect()))
}

/// The words of a Makefile line: split at spaces that no `\` escapes.
fn split_escaped(line: &str) -> impl Iterator<Item = String> + '_ {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            ' ' => {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
            }
            _ => current.push(ch),
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words.into_iter()
}

/// A generated file's name as its crate spells it: `OUT_DIR/consts.rs` for
/// `target/release/build/typenum-<hash>/out/consts.rs` (the hash is the
/// build's, not the crate's).
fn out_dir_relative(path: &Path) -> String {
    let parts: Vec<_> = path.components().collect();
    match parts.iter().rposition(|c| c.as_os_str() == "out") {
        Some(i) => {
            let rest: PathBuf = parts[i + 1..].iter().collect();
            format!("OUT_DIR/{}", rest.display())
        }
        None => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dep_info_lists_a_crates_output_and_sources_with_escaped_spaces() {
        let text = "/work/target/x/deps/gen-1.d: /work/vendor/gen-0.1.0/src/lib.rs \
                    /work/vendor/my\\ dir/a.rs /work/target/release/build/gen-9f/out/consts.rs\n\n\
                    /work/vendor/gen-0.1.0/src/lib.rs:\n\n# env-dep:OUT_DIR=/work/target\n";
        let (output, sources) = dep_info_rule(text).expect("a rule");
        assert_eq!(output, PathBuf::from("/work/target/x/deps/gen-1.d"));
        assert_eq!(
            sources,
            [
                "/work/vendor/gen-0.1.0/src/lib.rs",
                "/work/vendor/my dir/a.rs",
                "/work/target/release/build/gen-9f/out/consts.rs"
            ]
            .map(PathBuf::from)
        );
        assert!(dep_info_rule("# only a comment\n").is_none());
    }

    #[test]
    fn a_generated_file_is_named_below_out_dir() {
        assert_eq!(
            out_dir_relative(Path::new("target/release/build/gen-9f/out/sub/consts.rs")),
            "OUT_DIR/sub/consts.rs"
        );
        assert_eq!(
            out_dir_relative(Path::new("elsewhere/x.rs")),
            "elsewhere/x.rs"
        );
    }

    #[test]
    fn paths_that_climb_out_are_not_normalized_into_the_package() {
        assert_eq!(
            normalized(Path::new("vendor/x/src/./a/../b.rs")),
            Some(PathBuf::from("vendor/x/src/b.rs"))
        );
        assert_eq!(
            normalized(Path::new("vendor/x/src/../../../target/gen.rs")),
            Some(PathBuf::from("target/gen.rs"))
        );
        assert_eq!(normalized(Path::new("../outside.rs")), None);
        assert_eq!(normalized(Path::new("/abs.rs")), None);
    }

    /// A build folder with one crate, `gen`, whose package ships `lib.rs`
    /// and `consts.rs`, and whose dep-info lists `sources` (below `/work`).
    fn build_with(tag: &str, sources: &[&str]) -> (PathBuf, BuiltDeps) {
        let root =
            std::env::temp_dir().join(format!("kernel-deps-vet-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let package = root.join("vendor/gen-0.1.0");
        let deps = root.join("target/x/release/deps");
        std::fs::create_dir_all(package.join("src")).expect("vendor");
        std::fs::create_dir_all(&deps).expect("deps");
        let files = [
            ("src/lib.rs", "pub mod consts;\n"),
            (
                "src/consts.rs",
                "include!(concat!(env!(\"OUT_DIR\"), \"/consts.rs\"));\n",
            ),
        ];
        let mut sums = BTreeMap::new();
        for (rel, text) in files {
            std::fs::write(package.join(rel), text).expect("source");
            sums.insert(rel, hex::encode(Sha256::digest(text.as_bytes())));
        }
        let record = serde_json::json!({ "files": sums, "package": "0" });
        std::fs::write(package.join(".cargo-checksum.json"), record.to_string()).expect("sums");
        let rule = format!(
            "/work/target/x/release/deps/gen-1.d: {}\n",
            sources.join(" ")
        );
        std::fs::write(deps.join("gen-1.d"), rule).expect("dep-info");
        let built = BuiltDeps {
            root: root.clone(),
            crates: vec![DepCrate {
                name: "gen".into(),
                package: "gen 0.1.0".into(),
                rlib: "target/x/release/deps/libgen-1.rlib".into(),
                mir: "target/x/release/deps/gen-1.mir".into(),
                src_dir: "vendor/gen-0.1.0".into(),
                direct: true,
            }],
        };
        (root, built)
    }

    const OWN: [&str; 2] = [
        "/work/vendor/gen-0.1.0/src/lib.rs",
        "/work/vendor/gen-0.1.0/src/consts.rs",
    ];

    #[test]
    fn a_crate_that_compiles_only_its_shipped_files_is_accepted() {
        let (root, built) = build_with("own", &OWN);
        assert!(refuse_unvetted_sources(&built).is_ok());
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn code_generated_by_a_build_script_is_refused_by_crate_and_file() {
        let generated = "/work/target/release/build/gen-9f/out/consts.rs";
        // Below OUT_DIR, or reached from the package through `..`.
        let climbing =
            "/work/vendor/gen-0.1.0/src/../../../target/release/build/gen-9f/out/consts.rs";
        for (tag, extra) in [("out", generated), ("climb", climbing)] {
            let (root, built) = build_with(tag, &[OWN[0], OWN[1], extra]);
            match refuse_unvetted_sources(&built) {
                Err(DepsError::GeneratedCode {
                    krate,
                    file,
                    generated,
                }) => {
                    assert_eq!(krate, "gen-0.1.0");
                    assert_eq!(file, "gen-0.1.0/src/consts.rs");
                    assert_eq!(generated, "OUT_DIR/consts.rs");
                }
                other => panic!("{tag}: not refused: {other:?}"),
            }
            let _ = std::fs::remove_dir_all(root);
        }
    }

    #[test]
    fn a_file_added_to_or_changed_in_the_package_is_refused() {
        // Added: in the package's folder, but not in its checksums.
        let added = "/work/vendor/gen-0.1.0/src/written.rs";
        let (root, built) = build_with("added", &[OWN[0], added]);
        std::fs::write(
            root.join("vendor/gen-0.1.0/src/written.rs"),
            "pub fn f() {}\n",
        )
        .expect("add");
        assert!(matches!(
            refuse_unvetted_sources(&built),
            Err(DepsError::GeneratedCode { .. })
        ));
        let _ = std::fs::remove_dir_all(root);
        // Changed after vendoring.
        let (root, built) = build_with("changed", &OWN);
        std::fs::write(root.join("vendor/gen-0.1.0/src/lib.rs"), "pub mod other;\n")
            .expect("change");
        match refuse_unvetted_sources(&built) {
            Err(DepsError::ModifiedSource { krate, file }) => {
                assert_eq!(krate, "gen-0.1.0");
                assert_eq!(file, "gen-0.1.0/src/lib.rs");
            }
            other => panic!("not refused: {other:?}"),
        }
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn a_dep_info_without_sources_is_an_error() {
        let (root, built) = build_with("empty", &[]);
        assert!(matches!(
            refuse_unvetted_sources(&built),
            Err(DepsError::Tool(_))
        ));
        let _ = std::fs::remove_dir_all(root);
    }
}
