-- Porta: core entities of the specification.
CREATE EXTENSION IF NOT EXISTS citext;

CREATE TABLE "Organization" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "slug" CITEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "defaultLoginMethods" TEXT[] NOT NULL DEFAULT ARRAY['password', 'magic_link']::TEXT[],
    "twoFactorPolicy" TEXT NOT NULL DEFAULT 'optional',
    "defaultLocale" TEXT NOT NULL DEFAULT 'en',
    "branding" JSONB NOT NULL DEFAULT '{}',
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Organization_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "Organization_status_check" CHECK ("status" IN ('active', 'suspended', 'deleted')),
    CONSTRAINT "Organization_twoFactorPolicy_check" CHECK ("twoFactorPolicy" IN ('optional', 'required_email', 'required_totp', 'required_any')),
    CONSTRAINT "Organization_defaultLoginMethods_check" CHECK (cardinality("defaultLoginMethods") > 0 AND "defaultLoginMethods" <@ ARRAY['password', 'magic_link']::TEXT[])
);
CREATE UNIQUE INDEX "Organization_slug_key" ON "Organization"("slug");

CREATE TABLE "Application" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "status" TEXT NOT NULL DEFAULT 'active',
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Application_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "Application_status_check" CHECK ("status" IN ('active', 'inactive'))
);
CREATE UNIQUE INDEX "Application_organizationId_name_key" ON "Application"("organizationId", "name");

CREATE TABLE "ApplicationModule" (
    "id" UUID NOT NULL,
    "applicationId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "status" TEXT NOT NULL DEFAULT 'active',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ApplicationModule_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "ApplicationModule_status_check" CHECK ("status" IN ('active', 'inactive'))
);
CREATE UNIQUE INDEX "ApplicationModule_applicationId_name_key" ON "ApplicationModule"("applicationId", "name");

CREATE TABLE "Client" (
    "id" TEXT NOT NULL,
    "organizationId" UUID NOT NULL,
    "applicationId" UUID,
    "name" TEXT NOT NULL,
    "applicationType" TEXT NOT NULL DEFAULT 'web',
    "tokenEndpointAuthMethod" TEXT NOT NULL DEFAULT 'client_secret_basic',
    "redirectUris" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "postLogoutRedirectUris" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "grantTypes" TEXT[] NOT NULL DEFAULT ARRAY['authorization_code', 'refresh_token']::TEXT[],
    "scope" TEXT NOT NULL DEFAULT 'openid profile email offline_access',
    "loginMethods" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "status" TEXT NOT NULL DEFAULT 'active',
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Client_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "Client_status_check" CHECK ("status" IN ('active', 'inactive')),
    CONSTRAINT "Client_applicationType_check" CHECK ("applicationType" IN ('web', 'native')),
    CONSTRAINT "Client_tokenEndpointAuthMethod_check" CHECK ("tokenEndpointAuthMethod" IN ('none', 'client_secret_basic', 'client_secret_post')),
    CONSTRAINT "Client_loginMethods_check" CHECK ("loginMethods" <@ ARRAY['password', 'magic_link']::TEXT[])
);
CREATE INDEX "Client_organizationId_idx" ON "Client"("organizationId");

CREATE TABLE "ClientSecret" (
    "id" UUID NOT NULL,
    "clientId" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "hint" TEXT NOT NULL,
    "label" TEXT,
    "status" TEXT NOT NULL DEFAULT 'active',
    "expiresAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" TIMESTAMPTZ(3),
    CONSTRAINT "ClientSecret_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "ClientSecret_status_check" CHECK ("status" IN ('active', 'revoked'))
);
CREATE UNIQUE INDEX "ClientSecret_secretHash_key" ON "ClientSecret"("secretHash");
CREATE INDEX "ClientSecret_clientId_idx" ON "ClientSecret"("clientId");

CREATE TABLE "User" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "email" CITEXT NOT NULL,
    "emailVerified" BOOLEAN NOT NULL DEFAULT false,
    "givenName" TEXT,
    "familyName" TEXT,
    "locale" TEXT,
    "passwordHash" TEXT,
    "status" TEXT NOT NULL DEFAULT 'active',
    "failedLoginCount" INTEGER NOT NULL DEFAULT 0,
    "lockedUntil" TIMESTAMPTZ(3),
    "lastLoginAt" TIMESTAMPTZ(3),
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "User_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "User_status_check" CHECK ("status" IN ('active', 'inactive'))
);
CREATE UNIQUE INDEX "User_organizationId_email_key" ON "User"("organizationId", "email");

CREATE TABLE "Role" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Role_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "Role_organizationId_name_key" ON "Role"("organizationId", "name");

CREATE TABLE "Permission" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Permission_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "Permission_organizationId_name_key" ON "Permission"("organizationId", "name");

CREATE TABLE "UserRole" (
    "userId" UUID NOT NULL,
    "roleId" UUID NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "UserRole_pkey" PRIMARY KEY ("userId", "roleId")
);
CREATE INDEX "UserRole_roleId_idx" ON "UserRole"("roleId");

CREATE TABLE "RolePermission" (
    "roleId" UUID NOT NULL,
    "permissionId" UUID NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "RolePermission_pkey" PRIMARY KEY ("roleId", "permissionId")
);
CREATE INDEX "RolePermission_permissionId_idx" ON "RolePermission"("permissionId");

CREATE TABLE "CustomClaimDefinition" (
    "id" UUID NOT NULL,
    "applicationId" UUID NOT NULL,
    "claimName" TEXT NOT NULL,
    "claimType" TEXT NOT NULL,
    "description" TEXT,
    "scope" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "CustomClaimDefinition_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "CustomClaimDefinition_claimType_check" CHECK ("claimType" IN ('string', 'number', 'boolean', 'json'))
);
CREATE UNIQUE INDEX "CustomClaimDefinition_applicationId_claimName_key" ON "CustomClaimDefinition"("applicationId", "claimName");

CREATE TABLE "CustomClaimValue" (
    "claimId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "value" JSONB NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "CustomClaimValue_pkey" PRIMARY KEY ("claimId", "userId")
);
CREATE INDEX "CustomClaimValue_userId_idx" ON "CustomClaimValue"("userId");

CREATE TABLE "ConfigEntry" (
    "key" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "updatedBy" TEXT,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ConfigEntry_pkey" PRIMARY KEY ("key")
);

CREATE TABLE "SigningKey" (
    "id" TEXT NOT NULL,
    "alg" TEXT NOT NULL DEFAULT 'ES256',
    "publicJwk" JSONB NOT NULL,
    "privateJwkEncrypted" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retireAfter" TIMESTAMPTZ(3),
    "retiredAt" TIMESTAMPTZ(3),
    CONSTRAINT "SigningKey_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "SigningKey_alg_check" CHECK ("alg" = 'ES256'),
    CONSTRAINT "SigningKey_status_check" CHECK ("status" IN ('staged', 'active', 'retiring', 'retired'))
);
CREATE INDEX "SigningKey_status_idx" ON "SigningKey"("status");

CREATE TABLE "AuditEntry" (
    "id" UUID NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "eventType" TEXT NOT NULL,
    "organizationId" UUID,
    "actorType" TEXT NOT NULL,
    "actorId" TEXT,
    "targetType" TEXT,
    "targetId" TEXT,
    "ip" TEXT,
    "requestId" TEXT,
    "data" JSONB NOT NULL DEFAULT '{}',
    CONSTRAINT "AuditEntry_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "AuditEntry_organizationId_createdAt_idx" ON "AuditEntry"("organizationId", "createdAt");
CREATE INDEX "AuditEntry_eventType_createdAt_idx" ON "AuditEntry"("eventType", "createdAt");
CREATE INDEX "AuditEntry_targetType_targetId_createdAt_idx" ON "AuditEntry"("targetType", "targetId", "createdAt");
CREATE INDEX "AuditEntry_createdAt_idx" ON "AuditEntry"("createdAt");

ALTER TABLE "Application" ADD CONSTRAINT "Application_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ApplicationModule" ADD CONSTRAINT "ApplicationModule_applicationId_fkey" FOREIGN KEY ("applicationId") REFERENCES "Application"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Client" ADD CONSTRAINT "Client_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Client" ADD CONSTRAINT "Client_applicationId_fkey" FOREIGN KEY ("applicationId") REFERENCES "Application"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "ClientSecret" ADD CONSTRAINT "ClientSecret_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "Client"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "User" ADD CONSTRAINT "User_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Role" ADD CONSTRAINT "Role_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Permission" ADD CONSTRAINT "Permission_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "UserRole" ADD CONSTRAINT "UserRole_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "UserRole" ADD CONSTRAINT "UserRole_roleId_fkey" FOREIGN KEY ("roleId") REFERENCES "Role"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "RolePermission" ADD CONSTRAINT "RolePermission_roleId_fkey" FOREIGN KEY ("roleId") REFERENCES "Role"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "RolePermission" ADD CONSTRAINT "RolePermission_permissionId_fkey" FOREIGN KEY ("permissionId") REFERENCES "Permission"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "CustomClaimDefinition" ADD CONSTRAINT "CustomClaimDefinition_applicationId_fkey" FOREIGN KEY ("applicationId") REFERENCES "Application"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "CustomClaimValue" ADD CONSTRAINT "CustomClaimValue_claimId_fkey" FOREIGN KEY ("claimId") REFERENCES "CustomClaimDefinition"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "CustomClaimValue" ADD CONSTRAINT "CustomClaimValue_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
