from enum import StrEnum


class Action(StrEnum):
    ADMINISTER_CLUSTERS = "administer_clusters"
    MANAGE_BILLING = "manage_billing"
    MANAGE_CREDENTIALS = "manage_credentials"
    MANAGE_MEMBERS = "manage_members"
    MANAGE_ORG = "manage_org"
    MANAGE_POLICIES = "manage_policies"
    MANAGE_PROJECT_MEMBERS = "manage_project_members"
    MANAGE_RESOURCES = "manage_resources"
    MANAGE_SSO = "manage_sso"
    READ = "read"
    READ_AUDIT = "read_audit"
    READ_BILLING = "read_billing"
    READ_CREDENTIALS = "read_credentials"
    READ_MEMBERS = "read_members"
    READ_QUOTAS = "read_quotas"

    def __str__(self) -> str:
        return str(self.value)
