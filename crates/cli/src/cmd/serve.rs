//! `toolwarden serve`: run the gateway until SIGINT / SIGTERM.

use std::path::PathBuf;

use clap::{Arg, ArgMatches, Args, FromArgMatches};
use toolwarden_gateway::{Gateway, RawConfig, SETTINGS};

use super::{CmdError, Outcome};
use crate::config;

/// Flags of `serve`; each overrides `TOOLWARDEN_*` and `toolwarden.toml`.
/// One flag per setting of [`SETTINGS`] (its key with dashes) but those
/// that may carry credentials (`Setting::has_flag`), plus
/// `--config` and the alerts' flags. A credential's flag given anyway
/// (`--admin-token`) is refused, saying where to put it instead, without
/// its value.
#[derive(Debug)]
pub struct ServeArgs {
    /// A TOML config file (default: ./toolwarden.toml when it exists).
    pub config: Option<PathBuf>,
    /// The settings given as flags.
    pub settings: RawConfig,
    /// Alerts (issue 19).
    pub alerts: super::alerts::AlertFlags,
}

impl ServeArgs {
    fn into_raw(self) -> (Option<PathBuf>, RawConfig) {
        let mut raw = self.settings;
        raw.alerts = self.alerts.into_raw();
        (self.config, raw)
    }
}

impl Args for ServeArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let cmd = cmd.arg(
            Arg::new("config")
                .long("config")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("A TOML config file (default: ./toolwarden.toml when it exists)"),
        );
        let cmd = SETTINGS
            .iter()
            .filter(|s| s.has_flag())
            .fold(cmd, |cmd, setting| {
                let help = match setting.default {
                    "" => setting.doc.to_string(),
                    default => format!("{} [default: {default}]", setting.doc),
                };
                let check = *setting;
                cmd.arg(
                    Arg::new(setting.key)
                        .long(setting.flag())
                        .value_name(setting.key.to_ascii_uppercase())
                        // `-5` is a value to refuse with the setting's
                        // own words, not an unknown flag.
                        .allow_negative_numbers(true)
                        .help_heading(heading(setting.key))
                        .help(help)
                        .value_parser(move |text: &str| {
                            check.check(text).map(|()| text.to_string())
                        }),
                )
            });
        // Hidden, so that they are refused in words of their own, not
        // with clap's guess at a similar flag.
        let cmd = SETTINGS
            .iter()
            .filter(|s| !s.has_flag())
            .fold(cmd, |cmd, setting| {
                cmd.arg(
                    Arg::new(setting.key)
                        .long(setting.flag())
                        .hide(true)
                        .num_args(0..=1)
                        .allow_hyphen_values(true),
                )
            });
        super::alerts::AlertFlags::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for ServeArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        if let Some(secret) = SETTINGS
            .iter()
            .find(|s| !s.has_flag() && matches.contains_id(s.key))
        {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "--{} is not a flag: it holds a credential, and a flag's value shows in \
                     every process list (`ps`); set {} or `{}` in the config file",
                    secret.flag(),
                    secret.env_var(),
                    secret.key
                ),
            ));
        }
        let given = SETTINGS
            .iter()
            .filter(|s| s.has_flag())
            .filter_map(|setting| {
                matches
                    .get_one::<String>(setting.key)
                    .map(|value| (setting.key, value.as_str()))
            });
        Ok(ServeArgs {
            config: matches.get_one::<PathBuf>("config").cloned(),
            settings: RawConfig::from_flags(given),
            alerts: super::alerts::AlertFlags::from_arg_matches(matches)?,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// The `--help` section a setting's flag is listed under.
fn heading(key: &str) -> &'static str {
    match key {
        "listen" | "admin_token" | "allowed_hosts" | "workers" | "max_client_connections" => {
            "Listening"
        }
        k if k.ends_with("_upstream") || k == "upstream_ca" || k == "bedrock_region" => "Upstreams",
        "database" | "retention_days" | "record_drain_ms" => "Recording",
        k if k.starts_with("jsonl") => "Recording",
        k if k.starts_with("database_") || k.starts_with("record_") || k.starts_with("recent_") => {
            "Memory bounds"
        }
        k if k.starts_with("otlp_") => "OpenTelemetry",
        k if k.starts_with("detector_") || k == "repair" || k.starts_with("dashboard_") => {
            "Detection, repair, dashboard"
        }
        _ => "Limits and timeouts",
    }
}

/// Run the gateway; `banner`: print where to look next once it listens.
pub fn run(args: ServeArgs, banner: bool) -> Result<Outcome, CmdError> {
    let (config_file, flags) = args.into_raw();
    let mut raw = config::file_and_env(config_file.as_deref())?.merge(flags);
    config::database_or_default(&mut raw);
    let config = raw.validate()?;
    // The proxy runs on the gateway's own worker threads; this runtime
    // carries the accept-free rest: the recorder, the store, `/api/*`.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let cwd = std::env::current_dir().ok();
    let shown = config.clone();
    runtime.block_on(async move {
        let gateway = Gateway::start(config).await?;
        let next = if banner {
            super::serve_banner::banner(&shown, gateway.addr(), cwd.as_deref())
        } else {
            String::new()
        };
        err!("toolwarden: listening on {}\n{next}", gateway.base_url());
        gateway.wait().await;
        Ok::<_, CmdError>(())
    })?;
    Ok(Outcome::Ok)
}
