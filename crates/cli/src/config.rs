//! Where `serve`, `stats` and `env` get their settings: flags over
//! `TOOLWARDEN_*` environment variables over `toolwarden.toml` over defaults.

use std::path::Path;

use toolwarden_gateway::RawConfig;

use crate::error::CmdError;

/// The database used when none is configured anywhere.
pub const DEFAULT_DATABASE: &str = "sqlite://toolwarden.db";

/// The config file read when `--config` is not given and it exists.
pub const DEFAULT_CONFIG_FILE: &str = "toolwarden.toml";

/// File and environment layers merged, without the flags.
pub fn file_and_env(config: Option<&Path>) -> Result<RawConfig, CmdError> {
    let file = match config {
        Some(path) => RawConfig::from_toml_file(path)?,
        None if Path::new(DEFAULT_CONFIG_FILE).is_file() => {
            RawConfig::from_toml_file(DEFAULT_CONFIG_FILE)?
        }
        None => RawConfig::default(),
    };
    Ok(file.merge(RawConfig::from_env(environment()?.into_iter())))
}

/// The environment's variables that are text. `std::env::vars` panics on
/// one that is not (any program's, or a `PWD` in a directory whose name is
/// not UTF-8): those are skipped, as none is ours, except a `TOOLWARDEN_`
/// one, which is an error naming it.
fn environment() -> Result<Vec<(String, String)>, CmdError> {
    let mut vars = Vec::new();
    for (name, value) in std::env::vars_os() {
        match (name.into_string(), value.into_string()) {
            (Ok(name), Ok(value)) => vars.push((name, value)),
            (Ok(name), Err(_)) if name.starts_with("TOOLWARDEN_") => {
                return Err(CmdError(format!("{name}: the value is not valid UTF-8")));
            }
            _ => {}
        }
    }
    Ok(vars)
}

/// The database URL: the layers' value, else [`DEFAULT_DATABASE`].
pub fn database_or_default(raw: &mut RawConfig) {
    if raw.database.is_none() {
        raw.database = Some(DEFAULT_DATABASE.to_string());
    }
}

/// The database a reading command (`stats`, `alerts`) opens: `--database`
/// over the layers over [`DEFAULT_DATABASE`]; a SQLite file that does not
/// exist is an error naming it, not a new empty database.
pub fn existing_database(
    config: Option<&Path>,
    database: Option<String>,
) -> Result<String, CmdError> {
    existing_database_of(file_and_env(config)?, database)
}

/// [`existing_database`] of layers already read.
pub fn existing_database_of(
    mut raw: RawConfig,
    database: Option<String>,
) -> Result<String, CmdError> {
    if database.is_some() {
        raw.database = database;
    }
    database_or_default(&mut raw);
    let url = raw.database.unwrap_or_default();
    // `none` (or `off`, or empty) is how `serve` is told not to record: a
    // reading command has nothing to open then, which is not a file
    // named `none` that `serve` has not made yet.
    if matches!(url.trim(), "" | "none" | "off") {
        return Err(CmdError(format!(
            "no database to read: database is {:?} (serve records nothing); \
             pass --database with the one to read",
            url.trim()
        )));
    }
    if let Some(path) = toolwarden_store::sqlite_path(&url)
        && !path.exists()
    {
        return Err(CmdError(format!(
            "no database at {}: start `toolwarden serve` first, or pass --database",
            path.display()
        )));
    }
    Ok(url)
}

/// The tools (and model × tool pairs) `stats` lists: the configured
/// `dashboard_tool_rows`, as `/api/stats` lists them; 0 (unset) is the
/// store's default, which is the setting's. Out of range, as `serve`
/// refuses it.
pub fn tool_rows(raw: &RawConfig) -> Result<usize, CmdError> {
    use toolwarden_gateway::MAX_DASHBOARD_TOOL_ROWS as MAX;
    match raw.dashboard_tool_rows {
        None => Ok(0),
        Some(n @ 1..=MAX) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        Some(n) => Err(CmdError(format!(
            "dashboard_tool_rows {n}: expected 1 to {MAX} (the tools `stats` and \
             `/api/stats` list)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    /// A configured `database = "none"` is named as such, not taken
    /// for a missing SQLite file called `none`.
    #[test]
    fn no_database_configured_is_said_so() {
        for none in ["none", "off", " none "] {
            let err = super::existing_database(None, Some(none.to_string())).unwrap_err();
            assert!(err.0.contains("serve records nothing"), "{none}: {}", err.0);
        }
    }

    /// `dashboard_tool_rows` out of range is refused, as `serve` does.
    #[test]
    fn tool_rows_are_the_configured_ones() {
        let rows = |n| {
            let mut raw = super::RawConfig::default();
            raw.dashboard_tool_rows = n;
            super::tool_rows(&raw)
        };
        assert_eq!(rows(None).unwrap(), 0);
        assert_eq!(rows(Some(7)).unwrap(), 7);
        for bad in [0, 10_001] {
            assert!(
                rows(Some(bad)).unwrap_err().0.contains("1 to 10000"),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_documented_database_default_is_the_one_applied() {
        let documented = toolwarden_gateway::SETTINGS
            .iter()
            .find(|s| s.key == "database")
            .map(|s| s.default);
        assert_eq!(documented, Some(super::DEFAULT_DATABASE));
    }
}
