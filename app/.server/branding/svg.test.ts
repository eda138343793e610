import { describe, expect, it } from "vitest";
import { sanitizeSvg, SvgRefusedError } from "./svg";

const EVIL = `<?xml version="1.0"?>
<!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10" onload="alert(1)">
  <script>alert("script")</script>
  <script xlink:href="https://evil.example/x.js"/>
  <rect width="10" height="10" fill="#0f766e" onclick="alert(2)" ONMOUSEOVER="alert(3)"/>
  <a href="javascript:alert(4)"><circle r="3"/></a>
  <use href="https://evil.example/sprite.svg#icon"/>
  <use xlink:href="  java&#x09;script:alert(5)"/>
  <use href="#ok"/>
  <image href="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoNik+"/>
  <foreignObject><iframe src="javascript:alert(7)"></iframe><body onload="alert(8)"/></foreignObject>
  <animate attributeName="href" to="javascript:alert(9)"/>
  <set attributeName="onclick" to="alert(10)"/>
  <path d="M0 0L10 10" style="fill:url(https://evil.example/x)"/>
  <path d="M0 0L5 5" style="fill: url(#grad); stroke:red" fill="url(javascript:alert(11))"/>
  <style>@import url(https://evil.example/x.css); rect { fill: red }</style>
  <style>circle { fill: url(#grad) } a > b { color: blue }</style>
  <text x="1" y="5">Acme &amp; Co &lt;3 &xxe;</text>
  <!-- a comment <script>alert(12)</script> -->
  <![CDATA[<script>alert(13)</script>]]>
  <?php echo "x"; ?>
</svg>
<script>alert(14)</script>`;

describe("sanitizeSvg", () => {
  const clean = sanitizeSvg(EVIL);

  it("removes scripts, event handlers, javascript: and data: URLs, external references and active content", () => {
    for (const bad of ["<script", "alert(", "onload", "onclick", "onmouseover", "javascript", "evil.example", "data:", "foreignObject", "iframe", "<animate", "<set", "@import", "DOCTYPE", "ENTITY", "passwd", "<?", "<!--", "CDATA", "<image", "<a "]) {
      expect(clean.toLowerCase(), bad).not.toContain(bad.toLowerCase());
    }
  });

  it("keeps the drawing: shapes, colours, fragment references, safe styles and text", () => {
    expect(clean).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" xmlns:xlink="http:\/\/www\.w3\.org\/1999\/xlink" viewBox="0 0 10 10">/);
    expect(clean).toContain('<rect width="10" height="10" fill="#0f766e"></rect>');
    expect(clean).toContain('<use href="#ok"></use>');
    expect(clean).toContain('<path d="M0 0L5 5" style="fill: url(#grad); stroke:red"></path>');
    expect(clean).toContain('<path d="M0 0L10 10"></path>');
    expect(clean).toContain("<style>circle { fill: url(#grad) } a &gt; b { color: blue }</style>");
    expect(clean).toContain("<style></style>");
    expect(clean).toContain("<text x=\"1\" y=\"5\">Acme &amp; Co &lt;3 &amp;xxe;</text>");
    expect(clean.endsWith("</svg>")).toBe(true);
  });

  it("is stable: sanitizing its own output changes nothing", () => {
    expect(sanitizeSvg(clean)).toBe(clean);
  });

  it.each([
    ["an HTML document", "<html><body><svg></svg></body></html>"],
    ["plain text", "just text"],
    ["a script root", "<script>alert(1)</script>"],
    ["a prefixed root", '<svg:svg xmlns:svg="http://www.w3.org/2000/svg"/>'],
  ])("refuses %s", (_label, text) => {
    expect(() => sanitizeSvg(text)).toThrow(SvgRefusedError);
  });

  it("refuses absurd nesting", () => {
    expect(() => sanitizeSvg(`<svg>${"<g>".repeat(100)}${"</g>".repeat(100)}</svg>`)).toThrow(/deeper/);
  });
});
