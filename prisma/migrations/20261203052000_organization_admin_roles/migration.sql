-- Every organization has the roles its own administrators are given (decision 090): new ones
-- get them when they are made; this adds them to the organizations already there. A role an
-- organization had already named so is kept as it is.
INSERT INTO "Role" ("id", "organizationId", "name", "description")
SELECT gen_random_uuid(), o."id", r."name", r."description"
FROM "Organization" o
CROSS JOIN (VALUES
  ('org-admin', 'Administers this organization: its users, sign-in connections, SCIM tokens, domains, branding and audit log'),
  ('org-auditor', 'Reads this organization''s administration (users, connections, audit log) without changing it')
) AS r("name", "description")
ON CONFLICT ("organizationId", "name") DO NOTHING;
