import { useTranslation } from "react-i18next";
import { FormMessage } from "./auth-card";
import { useNonce } from "./nonce";

/**
 * The asking page of a magic link: the number to type if the link is opened on another device,
 * and the way on once it was (decision 033). With script it asks every few seconds whether the
 * other device confirmed and then continues; without script the link does the same by hand.
 */
export function MagicLinkWaiting({ uid, code, notYet }: { uid: string; code: string; notYet?: boolean }) {
  const { t } = useTranslation();
  const nonce = useNonce();
  const wait = `/interaction/${encodeURIComponent(uid)}/magic-link/wait`;
  const status = `/interaction/${encodeURIComponent(uid)}/magic-link/status`;
  const poll = `(function(){var u=${JSON.stringify(wait)};function c(){fetch(${JSON.stringify(status)},{credentials:"same-origin",headers:{accept:"application/json"}}).then(function(r){return r.ok?r.json():null}).then(function(b){if(b&&b.confirmed){location.assign(u)}else if(b){setTimeout(c,3000)}}).catch(function(){setTimeout(c,6000)})}setTimeout(c,3000)})()`;
  return (
    <>
      {code ? (
        <div className="pairing">
          <p>{t("magicLink.pairingHint")}</p>
          <p className="pairing-code">{code}</p>
        </div>
      ) : null}
      {notYet ? <FormMessage tone="info">{t("magicLink.notYet")}</FormMessage> : null}
      <p className="links">
        <a href={wait}>{t("magicLink.confirmedElsewhere")}</a>
      </p>
      {code ? <script nonce={nonce} dangerouslySetInnerHTML={{ __html: poll }} /> : null}
    </>
  );
}
