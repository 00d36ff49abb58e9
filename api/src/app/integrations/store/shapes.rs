//! How integration settings are kept in Postgres: `deploy_hooks.rules` holds
//! [`HookRuleStored`], not the public model, so the API and the stored shape
//! change separately; a row that does not read is an error, never an empty
//! rule list.

use serde::{Deserialize, Serialize};

use crate::model::{HookRule, HookTarget};

/// One rule of a project hook: which repository and image deploy to which deployment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct HookRuleStored {
    #[serde(default)]
    pub repository: Option<String>,
    #[serde(default)]
    pub image_prefix: Option<String>,
    pub target: HookTargetStored,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct HookTargetStored {
    pub cluster: String,
    pub namespace: String,
    pub deployment: String,
}

impl From<&HookRule> for HookRuleStored {
    fn from(rule: &HookRule) -> Self {
        HookRuleStored {
            repository: rule.repository.clone(),
            image_prefix: rule.image_prefix.clone(),
            target: HookTargetStored {
                cluster: rule.target.cluster.clone(),
                namespace: rule.target.namespace.clone(),
                deployment: rule.target.deployment.clone(),
            },
        }
    }
}

impl From<HookRuleStored> for HookRule {
    fn from(stored: HookRuleStored) -> Self {
        HookRule {
            repository: stored.repository,
            image_prefix: stored.image_prefix,
            target: HookTarget {
                cluster: stored.target.cluster,
                namespace: stored.target.namespace,
                deployment: stored.target.deployment,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::app::kernel::jsonb::{from_column, to_column};

    /// Rules as written before stored shapes existed still read, and write back the same.
    #[test]
    fn rules_written_before_still_read() {
        let rules = json!([
            { "repository": "acme/web", "image_prefix": "registry.example/web", "target":
                { "cluster": "prod", "namespace": "default", "deployment": "web" } },
            { "repository": null, "image_prefix": null, "target":
                { "cluster": "cl_1", "namespace": "shop", "deployment": "api" } },
        ]);
        let stored: Vec<HookRuleStored> = from_column("hook rules", &rules).unwrap();
        let model: Vec<HookRule> = stored.into_iter().map(HookRule::from).collect();
        assert_eq!(to_column(&model.iter().map(HookRuleStored::from).collect::<Vec<_>>()), rules);
        assert!(from_column::<Vec<HookRuleStored>>("hook rules", &json!([{ "target": 1 }])).is_err());
    }
}
