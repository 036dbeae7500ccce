//! A fixture's `[dependencies]` table: read, checked, and written back as
//! the manifest of the crate that cargo builds.
//!
//! Only registry dependencies are accepted, with the keys `version`,
//! `default-features` and `features`: a `path` or `git` source would let a
//! manifest reach outside crates.io, and every other key (`package`,
//! `optional`, registries) is refused rather than passed on unread. The
//! table is written back with the TOML serializer, never pasted, so no
//! manifest text reaches the generated `Cargo.toml` as text.

use std::collections::BTreeMap;

/// One dependency as the fixture asks for it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DepSpec {
    /// The version requirement (`"0.2"`, `"=0.2.16"`).
    pub version: String,
    /// Whether the crate's default features are on (`default-features`).
    pub default_features: bool,
    /// The features asked for, sorted.
    pub features: Vec<String>,
}

/// A checked `[dependencies]` table, by crate name.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DependencyTable {
    /// The dependencies, by the name the kernel uses (`libm`).
    pub deps: BTreeMap<String, DepSpec>,
}

/// Why a `[dependencies]` table was refused.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum SpecError {
    /// A dependency name that is not a crate name.
    #[error("dependency `{0}`: not a crate name (ASCII letters, digits, `-` and `_`)")]
    Name(String),
    /// A key this table does not accept.
    #[error(
        "dependency `{name}`: key `{key}` is not accepted (only `version`, \
         `default-features` and `features`: dependencies come from crates.io)"
    )]
    Key {
        /// The dependency.
        name: String,
        /// The key.
        key: String,
    },
    /// A value of the wrong kind.
    #[error("dependency `{name}`: {what}")]
    Value {
        /// The dependency.
        name: String,
        /// What is wrong.
        what: String,
    },
}

fn is_crate_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn is_feature_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '.' | '/'))
}

impl DependencyTable {
    /// Reads a `[dependencies]` table: `name = "1.0"` or
    /// `name = { version = "1.0", default-features = false, features = [..] }`.
    pub fn from_toml(table: &toml::Table) -> Result<DependencyTable, SpecError> {
        let mut deps = BTreeMap::new();
        for (name, value) in table {
            if !is_crate_name(name) {
                return Err(SpecError::Name(name.clone()));
            }
            let bad = |what: &str| SpecError::Value {
                name: name.clone(),
                what: what.to_string(),
            };
            let spec = match value {
                toml::Value::String(v) => DepSpec {
                    version: v.clone(),
                    default_features: true,
                    features: Vec::new(),
                },
                toml::Value::Table(t) => {
                    let mut spec = DepSpec {
                        version: String::new(),
                        default_features: true,
                        features: Vec::new(),
                    };
                    for (key, v) in t {
                        match (key.as_str(), v) {
                            ("version", toml::Value::String(s)) => spec.version = s.clone(),
                            ("default-features", toml::Value::Boolean(b)) => {
                                spec.default_features = *b
                            }
                            ("features", toml::Value::Array(a)) => {
                                for f in a {
                                    match f.as_str() {
                                        Some(f) if is_feature_name(f) => {
                                            spec.features.push(f.to_string())
                                        }
                                        _ => return Err(bad("a feature is not a feature name")),
                                    }
                                }
                            }
                            ("version" | "default-features" | "features", _) => {
                                return Err(bad(&format!("`{key}` has the wrong type")));
                            }
                            _ => {
                                return Err(SpecError::Key {
                                    name: name.clone(),
                                    key: key.clone(),
                                });
                            }
                        }
                    }
                    spec.features.sort();
                    spec.features.dedup();
                    spec
                }
                _ => return Err(bad("expected a version string or a table")),
            };
            if spec.version.trim().is_empty() {
                return Err(bad("no `version`"));
            }
            if !spec
                .version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || " .,*^~=<>-+".contains(c))
            {
                return Err(bad("`version` is not a version requirement"));
            }
            deps.insert(name.clone(), spec);
        }
        Ok(DependencyTable { deps })
    }

    /// Whether there is no dependency.
    pub fn is_empty(&self) -> bool {
        self.deps.is_empty()
    }

    /// Whether the fixture names package `package` (`md-5`, whose library
    /// is `md5`).
    pub fn names_package(&self, package: &str) -> bool {
        self.deps.contains_key(package)
    }

    /// The package names, as the fixture writes them.
    pub fn package_names(&self) -> impl Iterator<Item = &str> {
        self.deps.keys().map(String::as_str)
    }

    /// The `Cargo.toml` of the crate that cargo builds for these
    /// dependencies, written by the TOML serializer.
    pub fn cargo_manifest(&self) -> String {
        let mut package = toml::Table::new();
        package.insert("name".into(), PROJECT_NAME.into());
        package.insert("version".into(), "0.0.0".into());
        package.insert("edition".into(), "2024".into());
        package.insert("publish".into(), false.into());
        let mut deps = toml::Table::new();
        for (name, spec) in &self.deps {
            let mut t = toml::Table::new();
            t.insert("version".into(), spec.version.clone().into());
            t.insert("default-features".into(), spec.default_features.into());
            let features: Vec<toml::Value> =
                spec.features.iter().map(|f| f.clone().into()).collect();
            t.insert("features".into(), features.into());
            deps.insert(name.clone(), t.into());
        }
        let mut root = toml::Table::new();
        root.insert("package".into(), package.into());
        root.insert("dependencies".into(), deps.into());
        // Its own workspace: never part of one found above it.
        root.insert("workspace".into(), toml::Table::new().into());
        toml::to_string(&root).unwrap_or_default()
    }
}

/// The `[dependencies]` table of a fixture manifest's text (empty when it
/// has none). Only that table is read: the rest of the manifest is the
/// oracle's business.
pub fn manifest_dependencies(manifest: &str) -> Result<DependencyTable, SpecError> {
    let table: toml::Table = toml::from_str(manifest).map_err(|e| SpecError::Value {
        name: "manifest".into(),
        what: e.to_string(),
    })?;
    match table.get("dependencies") {
        Some(toml::Value::Table(t)) => DependencyTable::from_toml(t),
        Some(_) => Err(SpecError::Value {
            name: "manifest".into(),
            what: "`dependencies` is not a table".into(),
        }),
        None => Ok(DependencyTable::default()),
    }
}

/// The name of the generated crate that holds the dependencies.
pub const PROJECT_NAME: &str = "kernel-dependencies";

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Result<DependencyTable, SpecError> {
        let t: toml::Table = toml::from_str(text).expect("toml");
        DependencyTable::from_toml(&t)
    }

    #[test]
    fn registry_dependencies_are_read() {
        let t = table(
            "libm = { version = \"0.2\", default-features = false }\nsha2 = \"0.10\"\n\
             num-traits = { version = \"0.2\", features = [\"libm\", \"libm\"] }",
        )
        .expect("accepted");
        assert!(!t.deps["libm"].default_features);
        assert_eq!(t.deps["num-traits"].features, ["libm"]);
        assert_eq!(
            t.package_names().collect::<Vec<_>>(),
            ["libm", "num-traits", "sha2"]
        );
        assert!(t.names_package("num-traits") && !t.names_package("num_traits"));
        let manifest = t.cargo_manifest();
        let back: toml::Table = toml::from_str(&manifest).expect("valid toml");
        assert_eq!(
            back["dependencies"]["libm"]["default-features"].as_bool(),
            Some(false)
        );
    }

    #[test]
    fn sources_outside_the_registry_are_refused() {
        for (text, key) in [
            ("x = { version = \"1\", path = \"/etc\" }", "path"),
            (
                "x = { version = \"1\", git = \"https://example.com/x\" }",
                "git",
            ),
            ("x = { version = \"1\", package = \"y\" }", "package"),
        ] {
            assert_eq!(
                table(text),
                Err(SpecError::Key {
                    name: "x".into(),
                    key: key.into()
                })
            );
        }
        assert!(matches!(table("\"a b\" = \"1\""), Err(SpecError::Name(_))));
        assert!(matches!(
            table("x = { features = [] }"),
            Err(SpecError::Value { .. })
        ));
        assert!(matches!(
            table("x = \"1\\\"\\n[patch]\""),
            Err(SpecError::Value { .. })
        ));
    }
}
