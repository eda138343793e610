import { useTranslation } from "react-i18next";
import { useNonce } from "./nonce";

/**
 * Recovery codes shown once: the list, a download (a plain data: link, so it works without
 * script) and a copy button that script reveals. The codes never leave the page otherwise.
 */
export function RecoveryCodes({ codes, organizationName }: { codes: string[]; organizationName: string }) {
  const { t } = useTranslation();
  const nonce = useNonce();
  const text = `${t("twoFactor.codesFileHeading", { organization: organizationName })}\n\n${codes.join("\n")}\n`;
  const fileName = `recovery-codes-${organizationName.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "porta"}.txt`;
  const copy = `(function(){var b=document.getElementById("copy-recovery-codes");if(!b||!navigator.clipboard)return;b.hidden=false;b.addEventListener("click",function(){navigator.clipboard.writeText(b.getAttribute("data-codes")).then(function(){b.textContent=b.getAttribute("data-done")})})})()`;
  return (
    <>
      <ul className="recovery-codes" aria-label={t("twoFactor.codesTitle")}>
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <p className="code-actions">
        <a className="button button-secondary" href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`} download={fileName}>
          {t("twoFactor.codesDownload")}
        </a>
        <button className="button button-secondary" type="button" id="copy-recovery-codes" hidden data-codes={codes.join("\n")} data-done={t("twoFactor.codesCopied")}>
          {t("twoFactor.codesCopy")}
        </button>
      </p>
      <script nonce={nonce} dangerouslySetInnerHTML={{ __html: copy }} />
    </>
  );
}
