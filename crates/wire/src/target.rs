//! What a request body is judged against: its [`Dialect`] and, where a
//! provider's rules differ by model, the [`ModelFamily`] the request names.
//!
//! Bedrock Converse is one API in front of many models, and passes some of
//! their own checks on: Claude refuses a prefill ending in whitespace there
//! as it does on Anthropic's API ("The model returned the following errors:
//! messages: final assistant content cannot end with trailing whitespace",
//! aws/aws-sdk-net#4015), other models do not. The family is decided once
//! per request from the model id in the path ([`Target::of_path`]), so the
//! rules that depend on it cost a comparison, and the other dialects
//! nothing.

use crate::Dialect;

/// The family of the model a request names, as far as the wire rules tell
/// models apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ModelFamily {
    /// Not known, or a model no rule singles out: the rules every model of
    /// the dialect shares.
    #[default]
    Other,
    /// Anthropic's Claude.
    Claude,
}

/// A dialect and the family of the model a request names: what
/// [`validate`](crate::validate), [`inspect`](crate::inspect) and
/// [`repair`](crate::repair()) judge a body against. A [`Dialect`] alone
/// converts to one of [`ModelFamily::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Target {
    /// The request's dialect.
    pub dialect: Dialect,
    /// The family of its model.
    pub model: ModelFamily,
}

// === impl ModelFamily ===

impl ModelFamily {
    /// The family of a Bedrock model id, as the path names it
    /// (`/model/{modelId}/converse`, URL-decoded): a foundation model's id
    /// (`anthropic.claude-sonnet-4-20250514-v1:0`), a cross-region
    /// inference profile's (`us.anthropic.claude-…`, `global.…`,
    /// `us-gov.…`), or either in an ARN (`arn:aws:bedrock:…:
    /// foundation-model/anthropic.claude-…`, `…:inference-profile/eu.
    /// anthropic.claude-…`). An ARN that does not name its model (an
    /// application inference profile's, a provisioned model's) is
    /// [`ModelFamily::Other`]: only the account knows what it runs.
    pub fn of_bedrock_id(id: &str) -> ModelFamily {
        // An ARN's resource: what follows its last `/`.
        let name = id.rsplit_once('/').map_or(id, |(_, name)| name);
        // A region or geography prefix: lower-case letters and `-`.
        let unprefixed = name.split_once('.').and_then(|(prefix, rest)| {
            let region =
                !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
            region.then_some(rest)
        });
        let claude = |s: &str| s.starts_with("anthropic.claude");
        if claude(name) || unprefixed.is_some_and(claude) {
            ModelFamily::Claude
        } else {
            ModelFamily::Other
        }
    }
}

// === impl Target ===

impl Target {
    /// `dialect` with `model`.
    pub fn new(dialect: Dialect, model: ModelFamily) -> Target {
        Target { dialect, model }
    }

    /// The target of a request to `dialect` whose path names `model_id`
    /// (URL-decoded). Only Bedrock Converse's rules depend on the model:
    /// for the other dialects the id is not read.
    pub fn of_path(dialect: Dialect, model_id: Option<&str>) -> Target {
        let model = match (dialect, model_id) {
            (Dialect::BedrockConverse, Some(id)) => ModelFamily::of_bedrock_id(id),
            _ => ModelFamily::Other,
        };
        Target { dialect, model }
    }
}

impl From<Dialect> for Target {
    fn from(dialect: Dialect) -> Target {
        Target {
            dialect,
            model: ModelFamily::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn claude_on_bedrock_by_id_profile_and_arn() {
        let claude = [
            "anthropic.claude-3-5-sonnet-20240620-v1:0",
            "anthropic.claude-v2",
            "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
            "eu.anthropic.claude-sonnet-4-20250514-v1:0",
            "apac.anthropic.claude-3-haiku-20240307-v1:0",
            "global.anthropic.claude-opus-4-8",
            "us-gov.anthropic.claude-3-5-sonnet-20240620-v1:0",
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0",
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0",
            "arn:aws:bedrock:us-east-1:123456789012:default-prompt-router/anthropic.claude:1",
        ];
        for id in claude {
            assert_eq!(ModelFamily::of_bedrock_id(id), ModelFamily::Claude, "{id}");
        }
        let other = [
            "amazon.nova-pro-v1:0",
            "us.amazon.nova-lite-v1:0",
            "meta.llama4-maverick-17b-instruct-v1:0",
            "us.meta.llama3-3-70b-instruct-v1:0",
            "nvidia.nemotron-nano-12b-v2",
            "anthropic.claudia",
            "us.deepseek.r1-v1:0",
            // Names no model.
            "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6",
            "arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc123",
            // A prefix that is no region.
            "x.y.anthropic.claude-3",
            "US.anthropic.claude-3",
            ".anthropic.claude-3",
            "",
        ];
        for id in other {
            assert_eq!(ModelFamily::of_bedrock_id(id), ModelFamily::Other, "{id}");
        }
    }

    #[test]
    fn only_converse_reads_the_model() {
        let id = Some("anthropic.claude-3-haiku-20240307-v1:0");
        assert_eq!(
            Target::of_path(Dialect::BedrockConverse, id).model,
            ModelFamily::Claude
        );
        for dialect in Dialect::ALL {
            if dialect != Dialect::BedrockConverse {
                assert_eq!(Target::of_path(dialect, id), Target::from(dialect));
            }
        }
        assert_eq!(
            Target::of_path(Dialect::BedrockConverse, None),
            Target::from(Dialect::BedrockConverse)
        );
    }

    proptest! {
        /// Any id, and any id with a Claude id after it: no panic, and a
        /// Claude id is Claude behind any region prefix or ARN.
        #[test]
        fn any_id(id in any::<String>(), region in "[a-z-]{1,8}", arn in "[a-z0-9:-]{0,30}") {
            let _ = ModelFamily::of_bedrock_id(&id);
            let claude = format!("anthropic.claude-{}", id.replace('/', ""));
            prop_assert_eq!(ModelFamily::of_bedrock_id(&claude), ModelFamily::Claude);
            let profile = format!("{region}.{claude}");
            prop_assert_eq!(ModelFamily::of_bedrock_id(&profile), ModelFamily::Claude);
            let in_arn = format!("{arn}/{profile}");
            prop_assert_eq!(ModelFamily::of_bedrock_id(&in_arn), ModelFamily::Claude);
        }
    }
}
