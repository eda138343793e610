import { useTranslation } from "react-i18next";
import type { UserBlock } from "~/schemas/user";
import { LockedUntil } from "./lockout";
import { ActionForm } from "./ui";

/**
 * What refuses the user now, on their console page: the lockout (with Unlock, as before) and every
 * other block (a rate-limit window of the account or of an address they used, a device cookie's
 * lock, a second factor refused after too many wrong codes), each with when it ends and a Clear
 * button that posts its id. `now` is the loader's, so the server's and the browser's render agree.
 */
export function UserBlocks({ blocks, now }: { blocks: UserBlock[]; now: number }) {
  const { t, i18n } = useTranslation("console");
  if (blocks.length === 0) return <>{t("lockout.open")}</>;
  const time = (iso: string) => `${new Date(iso).toLocaleString(i18n.language, { timeZone: "UTC", dateStyle: "medium", timeStyle: "short" })} UTC`;
  return (
    <ul className="plain user-blocks">
      {blocks.map((block) =>
        block.kind === "lockout" ? (
          <li key={block.id} data-block={block.id}>
            <LockedUntil lockedUntil={block.until} now={now} />
            <span className="hint">{t("lockout.why")}</span>
            <ActionForm intent="unlock" className="inline-form">
              <button type="submit" className="button button-inline button-secondary">{t("lockout.unlock")}</button>
            </ActionForm>
          </li>
        ) : (
          <li key={block.id} data-block={block.id}>
            <span className="badge badge-warning">{describe(t, block)}</span>{" "}
            {block.until ? <time dateTime={block.until}>{t("blocks.until", { time: time(block.until) })}</time> : <span>{t("blocks.untilCleared")}</span>}{" "}
            <span className="hint">
              {t("blocks.rule")} <code>{block.setting}</code>
            </span>
            <ActionForm intent="clearBlock" className="inline-form" fields={{ block: block.id }}>
              <button type="submit" className="button button-inline button-secondary">{t("blocks.clear")}</button>
            </ActionForm>
          </li>
        ),
      )}
    </ul>
  );
}

type Translate = ReturnType<typeof useTranslation<"console">>["t"];

function describe(t: Translate, block: UserBlock): string {
  switch (block.kind) {
    case "device":
      return t("blocks.device");
    case "factor":
      return t(block.factor === "email" ? "blocks.factorEmail" : "blocks.factorTotp");
    case "address_limit":
      return t(`blocks.address.${block.limit ?? "passwordLogin"}`, { address: block.address ?? "" });
    default:
      return t(`blocks.account.${block.limit ?? "passwordLogin"}`);
  }
}
