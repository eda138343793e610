import type { PrismaClient } from "~/generated/prisma/client";
import type { AuditLog } from "../audit/audit";

/**
 * The end of a sign-in: the user's lastLoginAt and the `auth.login.success` audit entry that
 * statistics count. Written once the sign-in is complete, so a password whose second factor
 * never came is not counted as a login (it is `auth.password.verified`).
 */
export interface LoginSuccess {
  organizationId: string;
  userId: string;
  clientId: string;
  method: "password" | "magic_link";
  /** The second factor that completed a password sign-in. */
  secondFactor?: "totp" | "email" | "recovery";
  ip: string | null;
  requestId: string | null;
  at?: Date;
}

export async function recordLoginSuccess(deps: { prisma: PrismaClient; audit: AuditLog }, login: LoginSuccess): Promise<void> {
  await deps.prisma.user.update({ where: { id: login.userId }, data: { lastLoginAt: login.at ?? new Date() } });
  await deps.audit.record({
    eventType: "auth.login.success",
    organizationId: login.organizationId,
    actorType: "user",
    actorId: login.userId,
    targetType: "user",
    targetId: login.userId,
    ip: login.ip,
    requestId: login.requestId,
    data: { method: login.method, clientId: login.clientId, ...(login.secondFactor ? { secondFactor: login.secondFactor } : {}) },
  });
}
