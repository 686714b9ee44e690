//! The region of the selected AWS profile, as the AWS SDKs find it after
//! `AWS_REGION`: `aws configure` writes it to `~/.aws/config`.
//!
//! The files are read and parsed by `aws-config` (the parser its
//! credential chain uses: `[default]`, `[profile NAME]` in the config file,
//! `[NAME]` in the credentials file, comments, `AWS_CONFIG_FILE`,
//! `AWS_SHARED_CREDENTIALS_FILE`, `AWS_PROFILE`, `~` as `HOME`), over the
//! environment the gateway read at start-up. The region is the selected
//! profile's `region`, else its `source_profile`'s, and so on (the rule of
//! `aws-config`'s `ProfileFileRegionProvider`; a cycle gives none).
//!
//! The same files name endpoints the chain calls ([`endpoints`]): a
//! `[services …]` section's `endpoint_url` for STS, SSO or SSO OIDC, the
//! profile's own `endpoint_url` (every service's) and
//! `ec2_metadata_service_endpoint`, checked at start against the gateway's
//! own address.

use std::collections::HashMap;

use aws_config::profile::ProfileSet;
use aws_runtime::env_config::EnvConfigValue;
use aws_types::{
    origin::Origin,
    os_shim_internal::{Env, Fs},
};

use super::chain::{Endpoint, Reach};

/// The services whose clients the chain makes (STS for `role_arn` and web
/// identity, SSO for `sso_start_url` / `sso_session`, SSO OIDC for the
/// session's token refresh), by their service ID and the key of a
/// `[services …]` section (the ID in lower case, `-` for a space: the rule
/// of aws-runtime's `format_service_id_for_profile`).
const CHAIN_SERVICES: [(&str, &str); 3] =
    [("STS", "sts"), ("SSO", "sso"), ("SSO OIDC", "sso-oidc")];

/// The selected profile's IMDS endpoint (after the variable
/// `AWS_EC2_METADATA_SERVICE_ENDPOINT`: aws-config's `imds::client`).
const IMDS_ENDPOINT: &str = "ec2_metadata_service_endpoint";

/// The selected profile's region (`None`: no profile files, no such
/// profile, or no `region` in it or its source profiles), or the error of
/// a profile file that cannot be read or parsed, or whose region is not a
/// region's name (a value continued on the next line: the gateway would
/// otherwise refuse to start over a setting it may not use).
pub(crate) fn region(env: &HashMap<String, String>) -> Result<Option<String>, String> {
    let profiles = load(&Env::from(env.clone()))?;
    match selected_region(&profiles) {
        Some(region) if !is_region_name(&region) => {
            Err(format!("region {region:?} is not an AWS region name"))
        }
        found => Ok(found),
    }
}

/// The endpoint URLs the chain's STS, SSO and SSO OIDC clients take from
/// the environment's and the selected profile's settings for every
/// service, or from a `[services NAME]` section (the first given of
/// `AWS_ENDPOINT_URL_<SERVICE>`, `AWS_ENDPOINT_URL`, the section's
/// `endpoint_url`, the profile's: aws-config's `EnvConfigValue`;
/// `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is not read for the chain's
/// clients, `ProviderConfig::client_config`), each with the setting that
/// names it, and, when `imds` (the chain asks the instance metadata
/// service), `ec2_metadata_service_endpoint` unless
/// `AWS_EC2_METADATA_SERVICE_ENDPOINT` comes first. A service's variable
/// is left to the caller; a setting for every service comes once, with
/// the services that take it and that the chain would call
/// ([`Reach::Shared`], [`called`]). Not `sso_start_url`,
/// only the key of the SSO token cache. None when the files cannot be
/// read (the region's warning says why).
pub(crate) fn endpoints(env: &HashMap<String, String>, imds: bool) -> Vec<Endpoint> {
    let env = Env::from(env.clone());
    let Ok(profiles) = load(&env) else {
        return Vec::new();
    };
    let profile = profiles.selected_profile();
    let calls = called(&env, &profiles);
    let mut urls: Vec<Endpoint> = Vec::new();
    for (service, key) in CHAIN_SERVICES {
        let found = EnvConfigValue::new()
            .env("AWS_ENDPOINT_URL")
            .profile("endpoint_url")
            .service_id(service)
            .load(&env, Some(&profiles));
        let Some((url, source)) = found else {
            continue;
        };
        let origin: Origin = (&source).into();
        let setting = if origin == Origin::service_profile_file() {
            let section = profiles.get("services").unwrap_or_default();
            format!("endpoint_url of {key} in [services {section}] (AWS profile {profile})")
        } else if origin == Origin::shared_environment_variable() {
            "AWS_ENDPOINT_URL".to_string()
        } else if origin == Origin::shared_profile_file() {
            format!("endpoint_url of AWS profile {profile}")
        } else {
            // The service's variable, which the caller names.
            continue;
        };
        if origin == Origin::service_profile_file() {
            urls.push(Endpoint {
                setting,
                url: url.into_owned(),
                reach: Reach::Own,
            });
        } else if !calls.contains(&service) {
            // Not called: no warning about it.
            continue;
        } else if let Some(Endpoint {
            reach: Reach::Shared(services),
            ..
        }) = urls.iter_mut().find(|e| e.setting == setting)
        {
            services.push(service);
        } else {
            urls.push(Endpoint {
                setting,
                url: url.into_owned(),
                reach: Reach::Shared(vec![service]),
            });
        }
    }
    if imds
        && env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT").is_err()
        && let Some(url) = profiles.get(IMDS_ENDPOINT)
    {
        urls.push(Endpoint {
            setting: format!("{IMDS_ENDPOINT} of AWS profile {profile}"),
            url: url.to_string(),
            reach: Reach::Own,
        });
    }
    urls
}

/// The default endpoints of the services the chain would call
/// ([`called`]) that no setting gives an endpoint ([`endpoints`]'s
/// precedence), by the SDK's own endpoint rules (`aws-sdk-sts`'s, …
/// `DefaultResolver`): STS's for `region`, the chain's (aws-config hands
/// its `ProviderConfig` region to the web identity and `AssumeRole`
/// clients, `ProviderConfig::client_config`; `UseGlobalEndpoint` is never
/// set, so `sts.<region>.amazonaws.com`), SSO's (`portal.sso.<region>…`)
/// and SSO OIDC's (`oidc.<region>…`) for the profile's `sso_region`, or
/// its `[sso-session]`'s (aws-config's `profile::credentials::repr`), with
/// FIPS or dual stack as `AWS_USE_FIPS_ENDPOINT` / `use_fips_endpoint` and
/// `AWS_USE_DUALSTACK_ENDPOINT` / `use_dualstack_endpoint` say (what
/// `ConfigLoader::load` reads). A `resolve` entry may lead these names to
/// the gateway; the instance metadata service's and the container
/// endpoint's defaults are addresses, which no entry names. None when the
/// files cannot be read.
pub(crate) fn default_endpoints(env: &HashMap<String, String>, region: &str) -> Vec<Endpoint> {
    let env = Env::from(env.clone());
    let Ok(profiles) = load(&env) else {
        return Vec::new();
    };
    let flag = |variable: &'static str, key: &'static str| {
        EnvConfigValue::new()
            .env(variable)
            .profile(key)
            .load(&env, Some(&profiles))
            .is_some_and(|(v, _)| v.trim().eq_ignore_ascii_case("true"))
    };
    let fips = flag("AWS_USE_FIPS_ENDPOINT", "use_fips_endpoint");
    let dual = flag("AWS_USE_DUALSTACK_ENDPOINT", "use_dualstack_endpoint");
    let sso_region = match profiles.get("sso_session") {
        Some(session) => profiles
            .sso_session(session)
            .and_then(|s| s.get("sso_region")),
        None => profiles.get("sso_region"),
    };
    let configured = |service: &str| {
        EnvConfigValue::new()
            .env("AWS_ENDPOINT_URL")
            .profile("endpoint_url")
            .service_id(service)
            .load(&env, Some(&profiles))
            .is_some()
    };
    let mut urls = Vec::new();
    for service in called(&env, &profiles) {
        if configured(service) {
            continue;
        }
        let region = match service {
            "STS" => region,
            _ => match sso_region {
                Some(region) => region.trim(),
                None => continue,
            },
        };
        let Some(url) = default_url(service, region, fips, dual) else {
            continue;
        };
        urls.push(Endpoint {
            setting: format!("the default {service} endpoint for {region}"),
            url,
            reach: Reach::Default,
        });
    }
    urls
}

/// The URL `service`'s endpoint rules give for `region` (`None`: no
/// such region, say).
fn default_url(service: &str, region: &str, fips: bool, dual: bool) -> Option<String> {
    use futures_executor::block_on;
    let endpoint = match service {
        "STS" => {
            use aws_sdk_sts::config::endpoint::{DefaultResolver, Params, ResolveEndpoint};
            let params = Params::builder()
                .region(region)
                .use_fips(fips)
                .use_dual_stack(dual)
                .build()
                .ok()?;
            block_on(DefaultResolver::new().resolve_endpoint(&params)).ok()?
        }
        "SSO" => {
            use aws_sdk_sso::config::endpoint::{DefaultResolver, Params, ResolveEndpoint};
            let params = Params::builder()
                .region(region)
                .use_fips(fips)
                .use_dual_stack(dual)
                .build()
                .ok()?;
            block_on(DefaultResolver::new().resolve_endpoint(&params)).ok()?
        }
        _ => {
            use aws_sdk_ssooidc::config::endpoint::{DefaultResolver, Params, ResolveEndpoint};
            let params = Params::builder()
                .region(region)
                .use_fips(fips)
                .use_dual_stack(dual)
                .build()
                .ok()?;
            block_on(DefaultResolver::new().resolve_endpoint(&params)).ok()?
        }
    };
    Some(endpoint.url().to_string())
}

/// The services of [`CHAIN_SERVICES`] the chain would call, by the
/// environment's web identity and the selected profile's keys: STS for
/// web identity or `role_arn`, SSO for `sso_start_url` or `sso_session`,
/// SSO OIDC for `sso_session` (its token refresh).
fn called(env: &Env, profiles: &ProfileSet) -> Vec<&'static str> {
    let has = |key: &str| profiles.get(key).is_some();
    let web_identity =
        env.get("AWS_WEB_IDENTITY_TOKEN_FILE").is_ok() && env.get("AWS_ROLE_ARN").is_ok();
    let sts = web_identity || has("role_arn") || has("web_identity_token_file");
    let sso = has("sso_start_url") || has("sso_session");
    [(sts, "STS"), (sso, "SSO"), (has("sso_session"), "SSO OIDC")]
        .into_iter()
        .filter_map(|(called, service)| called.then_some(service))
        .collect()
}

/// The problem with the static keys the chain's profile provider would
/// read, if any: the profile it takes them from (aws-config's
/// `profile::credentials::repr::resolve_chain`: the selected profile, or
/// the `source_profile` a `role_arn` leads to, whose keys come first
/// there) giving `aws_access_key_id` or `aws_secret_access_key` without
/// the other, which fails every load (`static_creds_from_profile`:
/// "profile missing …"), or one of them empty (the parser trims values),
/// which the chain takes as it is, signing every request with an empty
/// key or secret that AWS refuses. `None` when the profile provider reads
/// no static keys (no profile, a `credential_source`, web identity, SSO,
/// `login_session`, `credential_process`, neither key given: it goes on
/// to the next source), or the files cannot be read (the region's
/// warning says why).
pub(crate) fn static_keys_problem(env: &HashMap<String, String>) -> Option<String> {
    let profiles = load(&Env::from(env.clone())).ok()?;
    let profile = static_keys_profile(&profiles)?;
    let (id, secret) = (
        profile.get("aws_access_key_id"),
        profile.get("aws_secret_access_key"),
    );
    let name = profile.name();
    let blank = |v: Option<&str>| v.is_some_and(|v| v.trim().is_empty());
    let fate = match (id, secret) {
        (None, None) => return None,
        (Some(_), None) | (None, Some(_)) => {
            let (given, missing) = if id.is_some() {
                ("aws_access_key_id", "aws_secret_access_key")
            } else {
                ("aws_secret_access_key", "aws_access_key_id")
            };
            format!(
                "AWS profile {name} gives {given} without {missing}: the AWS credential chain \
                 would fail every load (\"profile missing {missing}\")"
            )
        }
        _ if blank(id) || blank(secret) => {
            let empty = if blank(id) {
                "aws_access_key_id"
            } else {
                "aws_secret_access_key"
            };
            format!(
                "{empty} of AWS profile {name} is empty: the AWS credential chain would take \
                 it as it is and sign every Bedrock request with it, which AWS refuses"
            )
        }
        _ => return None,
    };
    Some(format!(
        "{fate}; give aws_access_key_id and aws_secret_access_key together, or neither"
    ))
}

/// The profile whose static keys the chain's profile provider reads (see
/// [`static_keys_problem`]), following `role_arn` / `source_profile` as
/// aws-config does; `None` when it reads none, or would fail before.
fn static_keys_profile(profiles: &ProfileSet) -> Option<&aws_config::profile::Profile> {
    const OTHER_SOURCES: [&str; 9] = [
        "credential_source",
        "web_identity_token_file",
        "sso_account_id",
        "sso_region",
        "sso_role_name",
        "sso_start_url",
        "sso_session",
        "login_session",
        "credential_process",
    ];
    let mut name = profiles.selected_profile();
    let mut visited = Vec::new();
    loop {
        let profile = profiles.get_profile(name)?;
        if visited.contains(&name) {
            return None;
        }
        visited.push(name);
        let has = |key: &str| profile.get(key).is_some();
        let keys = has("aws_access_key_id") && has("aws_secret_access_key");
        // After the first, a profile's static keys come before its role.
        if visited.len() > 1 && keys {
            return Some(profile);
        }
        // A role (web identity's is no chained one: `role_arn_from_profile`)
        // goes on to its source profile; one naming itself reads its own
        // keys; one with a `credential_source` (or an error) reads none.
        if has("role_arn") && !has("web_identity_token_file") {
            match (profile.get("source_profile"), has("credential_source")) {
                (Some(source), false) if source != name => {
                    name = source;
                    continue;
                }
                (Some(_), false) => {}
                _ => return None,
            }
        }
        return (!OTHER_SOURCES.iter().any(|k| has(k))).then_some(profile);
    }
}

/// The profile files `env` names, as aws-config reads them.
fn load(env: &Env) -> Result<ProfileSet, String> {
    // The files are read with blocking calls inside this async fn.
    let loaded = futures_executor::block_on(aws_config::profile::load(
        &Fs::real(),
        env,
        &Default::default(),
        None,
    ));
    loaded.map_err(|e| super::chain::error_chain(&e))
}

/// Letters, digits and `-`, as every AWS region's name.
pub(crate) fn is_region_name(region: &str) -> bool {
    !region.is_empty()
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The region of `profiles`' selected profile, following `source_profile`.
fn selected_region(profiles: &ProfileSet) -> Option<String> {
    let mut name = profiles.selected_profile();
    let mut visited = Vec::new();
    loop {
        let profile = profiles.get_profile(name)?;
        if visited.contains(&name) {
            return None;
        }
        visited.push(name);
        if let Some(region) = profile.get("region").map(str::trim)
            && !region.is_empty()
        {
            return Some(region.to_string());
        }
        name = profile.get("source_profile")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The region found with `config` as the config file and `vars` as the
    /// environment (`HOME` an empty directory).
    fn found(config: &str, vars: &[(&str, &str)]) -> Result<Option<String>, String> {
        in_env(config, vars, region)
    }

    /// `f` over the environment of `config` as the config file and `vars`
    /// (`HOME` an empty directory).
    fn in_env<T>(
        config: &str,
        vars: &[(&str, &str)],
        f: impl FnOnce(&HashMap<String, String>) -> T,
    ) -> T {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config");
        std::fs::write(&file, config).unwrap();
        let mut env = HashMap::from([
            ("HOME".to_string(), dir.path().to_str().unwrap().to_string()),
            (
                "AWS_CONFIG_FILE".to_string(),
                file.to_str().unwrap().to_string(),
            ),
        ]);
        for (k, v) in vars {
            env.insert(k.to_string(), v.to_string());
        }
        f(&env)
    }

    /// The settings [`endpoints`] names, with the instance metadata asked.
    fn named(config: &str, vars: &[(&str, &str)]) -> Vec<String> {
        in_env(config, vars, |env| endpoints(env, true))
            .into_iter()
            .map(
                |Endpoint {
                     setting,
                     url,
                     reach,
                 }| match reach {
                    Reach::Own => format!("{setting} = {url}"),
                    Reach::Shared(services) => format!("{setting} = {url} for {services:?}"),
                    Reach::Default => format!("{setting} = {url} by default"),
                },
            )
            .collect()
    }

    const SERVICES: &str = "\
[default]
services = gw
endpoint_url = http://shared.test
ec2_metadata_service_endpoint = http://imds.test
sso_session = s

[profile other]
endpoint_url = http://shared.test

[services gw]
sts =
  endpoint_url = http://sts.test
sso-oidc =
  endpoint_url = http://oidc.test
";

    /// The static keys the profile provider would read are judged where
    /// it reads them: a half pair or an empty one is a problem, in the
    /// selected profile or the source profile a role leads to; a profile
    /// whose credentials come from elsewhere, or gives no keys, is none.
    #[test]
    fn a_half_or_empty_key_pair_in_the_profile_read_is_a_problem() {
        let problem = |config: &str| in_env(config, &[], static_keys_problem);
        let both = "[default]\naws_access_key_id = AKID\naws_secret_access_key = s\n";
        assert_eq!(problem(both), None);
        assert_eq!(problem("[default]\nregion = us-east-1\n"), None);
        assert_eq!(problem(""), None);
        let e = problem("[default]\naws_access_key_id = AKID\naws_secret_access_key =\n");
        assert_eq!(
            e.as_deref(),
            Some(
                "aws_secret_access_key of AWS profile default is empty: the AWS credential \
                 chain would take it as it is and sign every Bedrock request with it, which \
                 AWS refuses; give aws_access_key_id and aws_secret_access_key together, or \
                 neither"
            )
        );
        let e = problem("[default]\naws_access_key_id =   \naws_secret_access_key = s\n");
        assert!(
            e.unwrap()
                .starts_with("aws_access_key_id of AWS profile default is empty")
        );
        let e = problem("[default]\naws_access_key_id = AKID\n").unwrap();
        assert!(
            e.starts_with(
                "AWS profile default gives aws_access_key_id without aws_secret_access_key: \
                 the AWS credential chain would fail every load (\"profile missing \
                 aws_secret_access_key\")"
            ),
            "{e}"
        );
        // Through a role to its source profile; not past a credential
        // source, and not for a profile whose credentials come otherwise.
        let role = |source: &str| {
            format!(
                "[default]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = base\n\
                 [profile base]\n{source}\n"
            )
        };
        let e = problem(&role("aws_secret_access_key = s")).unwrap();
        assert!(
            e.starts_with("AWS profile base gives aws_secret_access_key without"),
            "{e}"
        );
        assert_eq!(
            problem(&role("aws_access_key_id = A\naws_secret_access_key = s")),
            None
        );
        for elsewhere in [
            "credential_process = /bin/creds\naws_access_key_id = A",
            "web_identity_token_file = /t\nrole_arn = r\naws_access_key_id = A",
            "sso_session = s\naws_access_key_id = A",
        ] {
            assert_eq!(problem(&role(elsewhere)), None, "{elsewhere}");
        }
        let source = "[default]\nrole_arn = r\ncredential_source = Environment\n\
                      aws_access_key_id = A\n";
        assert_eq!(problem(source), None);
        // A source profile's keys come before its own role.
        let keys_first = role("aws_access_key_id = A\naws_secret_access_key =\nrole_arn = r2");
        assert!(problem(&keys_first).is_some());
        // AWS_PROFILE selects the profile judged.
        let other = "[default]\naws_access_key_id = A\n[profile ok]\nregion = us-east-1\n";
        assert_eq!(
            in_env(other, &[("AWS_PROFILE", "ok")], static_keys_problem),
            None
        );
    }

    /// The default endpoints are those the SDK's endpoint rules give for
    /// the services the chain calls (STS for web identity or role_arn, SSO
    /// for an SSO profile, SSO OIDC for a session's), in their region, with
    /// FIPS or dual stack; none for a service a setting names.
    #[test]
    fn the_default_endpoints_are_the_sdks_for_the_services_called() {
        let defaults = |config: &str, vars: &[(&str, &str)], region: &str| -> Vec<String> {
            in_env(config, vars, |env| default_endpoints(env, region))
                .into_iter()
                .map(|e| {
                    assert_eq!(e.reach, Reach::Default);
                    format!("{} = {}", e.setting, e.url)
                })
                .collect()
        };
        let web_identity = [
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/t"),
            ("AWS_ROLE_ARN", "arn:aws:iam::1:role/r"),
        ];
        assert_eq!(
            defaults("", &web_identity, "us-east-1"),
            ["the default STS endpoint for us-east-1 = https://sts.us-east-1.amazonaws.com"]
        );
        assert_eq!(
            defaults("", &web_identity, "cn-north-1"),
            ["the default STS endpoint for cn-north-1 = https://sts.cn-north-1.amazonaws.com.cn"]
        );
        let fips = [
            web_identity[0],
            web_identity[1],
            ("AWS_USE_FIPS_ENDPOINT", "true"),
        ];
        assert_eq!(
            defaults("", &fips, "us-west-2"),
            ["the default STS endpoint for us-west-2 = https://sts-fips.us-west-2.amazonaws.com"]
        );
        // A setting that names STS's endpoint: no default is called.
        for set in ["AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL"] {
            let vars = [web_identity[0], web_identity[1], (set, "http://sts.test")];
            assert!(defaults("", &vars, "us-east-1").is_empty(), "{set}");
        }
        // Nothing the chain calls STS or SSO for.
        assert!(defaults("[default]\nregion = eu-west-1\n", &[], "eu-west-1").is_empty());
        let role = "[default]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = base\n\
                    [profile base]\naws_access_key_id = AKID\naws_secret_access_key = s\n\
                    use_dualstack_endpoint = true\n";
        assert_eq!(
            defaults(role, &[], "eu-west-1"),
            ["the default STS endpoint for eu-west-1 = https://sts.eu-west-1.amazonaws.com"]
        );
        // SSO with a session: the portal and OIDC at the session's region;
        // the legacy form: the portal only.
        let session = "[default]\nsso_session = s\nsso_account_id = 1\nsso_role_name = r\n\
                       use_dualstack_endpoint = true\n\
                       [sso-session s]\nsso_region = eu-central-1\n\
                       sso_start_url = https://d.awsapps.com/start\n";
        assert_eq!(
            defaults(session, &[], "us-east-1"),
            [
                "the default SSO endpoint for eu-central-1 = \
                 https://portal.sso.eu-central-1.api.aws",
                "the default SSO OIDC endpoint for eu-central-1 = \
                 https://oidc.eu-central-1.api.aws",
            ]
        );
        let legacy = "[default]\nsso_start_url = https://d.awsapps.com/start\n\
                      sso_region = ap-south-1\nsso_account_id = 1\nsso_role_name = r\n";
        assert_eq!(
            defaults(legacy, &[], "us-east-1"),
            ["the default SSO endpoint for ap-south-1 = \
                 https://portal.sso.ap-south-1.amazonaws.com"]
        );
    }

    /// A `[services …]` section's endpoint is the chain's own unless a
    /// variable comes first (its service's, named on its own by the chain,
    /// or `AWS_ENDPOINT_URL`); a setting for every service is named once,
    /// with the services that take it; the IMDS key only when the metadata
    /// is asked and its variable unset; only the selected profile's.
    #[test]
    fn the_profiles_endpoints_are_named_where_the_chain_takes_them() {
        let shared = |setting: &str, url: &str, services: &[&str]| {
            format!("{setting} = {url} for {services:?}")
        };
        let sts = "endpoint_url of sts in [services gw] (AWS profile default) = http://sts.test";
        let oidc =
            "endpoint_url of sso-oidc in [services gw] (AWS profile default) = http://oidc.test";
        let imds = "ec2_metadata_service_endpoint of AWS profile default = http://imds.test";
        let profiles = "endpoint_url of AWS profile default";
        assert_eq!(
            named(SERVICES, &[]),
            [
                sts.to_string(),
                shared(profiles, "http://shared.test", &["SSO"]),
                oidc.to_string(),
                imds.to_string(),
            ]
        );
        assert_eq!(
            named(
                SERVICES,
                &[
                    ("AWS_ENDPOINT_URL_STS", "http://env-sts.test"),
                    ("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://env-imds.test"),
                ]
            ),
            [
                shared(profiles, "http://shared.test", &["SSO"]),
                oidc.to_string()
            ]
        );
        assert_eq!(
            named(SERVICES, &[("AWS_ENDPOINT_URL", "http://gw.test")]),
            [
                shared("AWS_ENDPOINT_URL", "http://gw.test", &["SSO", "SSO OIDC"]),
                imds.to_string()
            ]
        );
        // Every service's setting only for the services the chain calls.
        assert!(named(SERVICES, &[("AWS_PROFILE", "other")]).is_empty());
        let web_identity = [
            ("AWS_PROFILE", "other"),
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/t"),
            ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/r"),
        ];
        let other = "endpoint_url of AWS profile other";
        assert_eq!(
            named(SERVICES, &web_identity),
            [shared(other, "http://shared.test", &["STS"])]
        );
        let off = in_env(SERVICES, &[], |env| endpoints(env, false));
        assert_eq!(off.len(), 3, "{off:?}");
        assert!(named("[default\n", &[]).is_empty());
    }

    const CONFIG: &str = "\
# written by aws configure
[default]
region = eu-central-1
output = json

; another comment
[profile work]
region=ap-south-1

[profile bare]
output = json

[profile chained]
source_profile = work
role_arn = arn:aws:iam::123456789012:role/r

[loop-a]
region = us-west-1

[profile cycle]
source_profile = cycle
";

    #[test]
    fn the_default_profiles_region_then_the_one_aws_profile_names() {
        assert_eq!(found(CONFIG, &[]), Ok(Some("eu-central-1".into())));
        let profile = |name| found(CONFIG, &[("AWS_PROFILE", name)]);
        assert_eq!(profile("work"), Ok(Some("ap-south-1".into())));
        assert_eq!(profile("chained"), Ok(Some("ap-south-1".into())));
        // No region in the profile: none (not the default's).
        assert_eq!(profile("bare"), Ok(None));
        assert_eq!(profile("cycle"), Ok(None));
        assert_eq!(profile("missing"), Ok(None));
        // In the config file a profile other than `default` needs the
        // `profile ` prefix.
        assert_eq!(profile("loop-a"), Ok(None));
    }

    /// A value continued on the next line (aws-config joins it with a
    /// newline) or in capitals is not a region: an error, which the
    /// configuration reports as a warning, not a refusal to start. An
    /// inline comment is aws-config's to take off.
    #[test]
    fn a_region_that_is_no_region_name_is_an_error() {
        for config in [
            "[default]\nregion=#\n\ta",
            "[default]\nregion = US-EAST-1\n",
        ] {
            let err = found(config, &[]).unwrap_err();
            assert!(err.contains("not an AWS region name"), "{config:?}: {err}");
        }
        for config in [
            "[default]\nregion = us-east-1 \n",
            "[default]\nregion = us-east-1 # work\n",
        ] {
            assert_eq!(
                found(config, &[]),
                Ok(Some("us-east-1".into())),
                "{config:?}"
            );
        }
    }

    #[test]
    fn no_file_gives_no_region_and_a_broken_one_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_str().unwrap().to_string();
        assert_eq!(region(&HashMap::from([("HOME".into(), home)])), Ok(None));
        assert_eq!(region(&HashMap::new()), Ok(None));
        let err = found("region = us-east-1\n", &[]).unwrap_err();
        assert!(err.contains("parse"), "{err}");
    }

    proptest::proptest! {
        /// Any config file gives a region, none, or an error, and endpoints
        /// (its own, and the defaults for any region) or none; never a panic.
        /// A region found is a region's name, one a `region =` line of the
        /// file gave.
        #[test]
        fn any_config_file_is_read_without_panicking(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("[default]".to_string()),
                    proptest::strategy::Just("[profile p]".to_string()),
                    proptest::strategy::Just("source_profile = default".to_string()),
                    proptest::strategy::Just("services = s".to_string()),
                    proptest::strategy::Just("[services s]".to_string()),
                    "(sts|sso|sso-oidc) ?=",
                    "[ \t]{1,2}(endpoint_url|ec2_metadata_service_endpoint) ?= ?[a-z:/.]{0,10}",
                    "region ?= ?[a-z0-9 #;-]{0,12}",
                    "(sso_region|sso_session|role_arn) ?= ?\\PC{0,12}",
                    "(use_fips_endpoint|use_dualstack_endpoint) ?= ?\\PC{0,6}",
                    "(aws_access_key_id|aws_secret_access_key|credential_source) ?= ?[a-z ]{0,3}",
                    proptest::strategy::Just("[sso-session s]".to_string()),
                    "[\\[\\]a-z =#;\t-]{0,16}",
                    "\\PC{0,12}",
                ],
                0..8,
            ),
            profile in proptest::option::of("p|default|q"),
        ) {
            let text = lines.join("\n");
            let vars: Vec<(&str, &str)> = profile.iter().map(|p| ("AWS_PROFILE", p.as_str())).collect();
            in_env(&text, &vars, |env| endpoints(env, true));
            in_env(&text, &vars, static_keys_problem);
            for region in ["us-east-1", "", "\u{0}x.y/"] {
                in_env(&text, &vars, |env| default_endpoints(env, region));
            }
            if let Ok(Some(region)) = found(&text, &vars) {
                proptest::prop_assert!(is_region_name(&region), "{region:?}");
                proptest::prop_assert!(text.contains(&region), "{region:?} not in {text:?}");
            }
        }
    }

    #[test]
    fn the_default_file_is_under_home() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".aws")).unwrap();
        std::fs::write(
            dir.path().join(".aws/config"),
            "[default]\nregion = sa-east-1\n",
        )
        .unwrap();
        let home = dir.path().to_str().unwrap().to_string();
        let env = HashMap::from([("HOME".to_string(), home)]);
        assert_eq!(region(&env), Ok(Some("sa-east-1".into())));
    }
}
