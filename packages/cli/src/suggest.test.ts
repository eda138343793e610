import { expect, it } from "vitest";
import { didYouMean, editDistance, nearest } from "./suggest";

it("counts insertions, deletions, substitutions and a swapped pair as one edit each", () => {
  expect(editDistance("list", "list")).toBe(0);
  expect(editDistance("lst", "list")).toBe(1);
  expect(editDistance("lisst", "list")).toBe(1);
  expect(editDistance("lost", "list")).toBe(1);
  expect(editDistance("lsit", "list")).toBe(1);
  expect(editDistance("", "abc")).toBe(3);
  expect(editDistance("kitten", "sitting")).toBe(3);
});

it("suggests the nearest candidate within about one edit per three letters, or one the word begins", () => {
  const areas = ["organizations", "orgs", "users", "user", "clients", "keys", "whoami"];
  expect(nearest("orgz", areas)).toBe("orgs");
  expect(nearest("usres", areas)).toBe("users");
  expect(nearest("organiz", areas)).toBe("organizations");
  expect(nearest("Clients", areas)).toBe("clients");
  expect(nearest("xyzzy", areas)).toBeUndefined();
  expect(nearest("k", areas)).toBeUndefined();
  expect(didYouMean("whoamii", areas, (c) => `porta ${c}`)).toBe(" Did you mean `porta whoami`?");
  expect(didYouMean("nothing-like-it", areas)).toBe("");
});
