//! The server a run measured, as facts stored beside it: its version and
//! every setting that differs from PostgreSQL's built-in default (from the
//! configuration file, the command line or the environment), as
//! `pg_setting.NAME` → the value as `SHOW` prints it. Settings that only
//! say how storlab connects (`port`, `listen_addresses`,
//! `unix_socket_directories`) and those the session or initdb's paths
//! decide (sources `client`, `session`, `override`) are left out: they do
//! not change what the server does to the storage. Pure: the SQL and its
//! answer only.

use anyhow::{Context, Result};
use serde_json::Value;

/// The query printing one JSON object with the version and the settings.
pub const SQL: &str = "SELECT json_build_object(\
    'version', current_setting('server_version'), \
    'version_num', current_setting('server_version_num'), \
    'settings', (SELECT json_object_agg(name, current_setting(name) ORDER BY name) \
      FROM pg_settings WHERE source NOT IN ('default', 'override', 'client', 'session') \
      AND name NOT IN ('port', 'listen_addresses', 'unix_socket_directories')))";

/// Fact names.
pub const VERSION: &str = "pg_server_version";
pub const VERSION_NUM: &str = "pg_server_version_num";
pub const SETTING_PREFIX: &str = "pg_setting.";
/// The release the server reports (`17.6`), as every system storlab can
/// take from a root records it (`software_version.PROGRAM`).
pub const SOFTWARE_VERSION: &str = "software_version.postgresql";

/// What the server said about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerFacts {
    /// `15.18 (Debian 15.18-0+deb12u1)`.
    pub version: String,
    /// `150018`.
    pub version_num: u32,
    pub settings: Vec<(String, String)>,
}

impl ServerFacts {
    /// Reads what [`SQL`] printed.
    pub fn from_json(text: &str) -> Result<ServerFacts> {
        let v: Value = serde_json::from_str(text.trim())
            .with_context(|| format!("the server's facts are not JSON: `{}`", text.trim()))?;
        let version = v["version"]
            .as_str()
            .context("the server did not say its version")?
            .to_string();
        let version_num = v["version_num"]
            .as_str()
            .and_then(|n| n.parse().ok())
            .context("the server did not say its version number")?;
        let settings = v["settings"]
            .as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        Ok(ServerFacts {
            version,
            version_num,
            settings,
        })
    }

    /// As the run's facts: name → text.
    pub fn to_facts(&self) -> Vec<(String, String)> {
        let mut out = vec![
            (VERSION.to_string(), self.version.clone()),
            (VERSION_NUM.to_string(), self.version_num.to_string()),
        ];
        if let Some(release) = self.version.split_whitespace().next() {
            out.push((SOFTWARE_VERSION.to_string(), release.to_string()));
        }
        out.extend(
            self.settings
                .iter()
                .map(|(k, v)| (format!("{SETTING_PREFIX}{k}"), v.clone())),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_of_a_pg15_server_becomes_facts() {
        let text = r#"{"version" : "15.18 (Debian 15.18-0+deb12u1)", "version_num" : "150018", "settings" : { "full_page_writes" : "off", "shared_buffers" : "128MB" }}"#;
        let f = ServerFacts::from_json(text).unwrap();
        assert_eq!(f.version_num, 150018);
        assert_eq!(
            f.to_facts(),
            vec![
                (VERSION.into(), "15.18 (Debian 15.18-0+deb12u1)".into()),
                (VERSION_NUM.into(), "150018".into()),
                (SOFTWARE_VERSION.into(), "15.18".into()),
                ("pg_setting.full_page_writes".into(), "off".into()),
                ("pg_setting.shared_buffers".into(), "128MB".into()),
            ]
        );
        assert!(ServerFacts::from_json("{}").is_err());
        assert!(ServerFacts::from_json("psql: error").is_err());
    }
}
