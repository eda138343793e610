import argon2 from "argon2";
import { describe, expect, it } from "vitest";
import { Argon2HashSchema, argon2Parameters } from "./argon2-hash";

describe("Argon2 PHC strings", () => {
  it("accept what the installed argon2 writes, and what earlier releases wrote (parameters in another order)", async () => {
    const today = await argon2.hash("a password", { type: argon2.argon2id, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    expect(Argon2HashSchema.safeParse(today).success).toBe(true);
    expect(Argon2HashSchema.safeParse("$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2g").success).toBe(true);
    expect(Argon2HashSchema.safeParse("$argon2id$v=19$m=19456,p=1,t=2$c2FsdHNhbHQ$aGFzaGhhc2g").success).toBe(true);
    expect(argon2Parameters(today)).toEqual({ type: "argon2id", memoryCost: 4096, timeCost: 1, parallelism: 1 });
  });

  it("refuse anything else: a missing or repeated parameter, another algorithm, stray text", () => {
    for (const bad of [
      "$argon2id$v=19$m=19456,t=2$c2FsdA$aGFzaA",
      "$argon2id$v=19$m=19456,t=2,t=2$c2FsdA$aGFzaA",
      "$argon2id$v=19$m=19456,t=2,p=1,x=3$c2FsdA$aGFzaA",
      "$2b$10$abcdefghijklmnopqrstuv",
      "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA\n",
      "plain",
    ]) {
      expect(Argon2HashSchema.safeParse(bad).success, bad).toBe(false);
      expect(argon2Parameters(bad), bad).toBeNull();
    }
  });
});
