// A session's device in words, from the User-Agent it signed in with: "Chrome on Windows",
// "Safari on iOS", "curl". A rough reading for a person looking at their sessions list, not a
// browser-detection library: the order of the tests matters (Edge and Opera also say "Chrome",
// Chrome also says "Safari", iOS also says "Mac OS X", Android also says "Linux").

const BROWSERS: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bVivaldi\//, 'Vivaldi'],
  [/\bYaBrowser\//, 'Yandex Browser'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bCriOS\/|\bChrome\/|\bChromium\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\/|\bMobile\/\w+.*Safari/, 'Safari'],
  [/\bMSIE |\bTrident\//, 'Internet Explorer'],
  [/^hostplane-cli\b|^hostplane\//i, 'Hostplane CLI'],
  [/^curl\//, 'curl'],
  [/^Wget\//, 'Wget'],
  [/^python-requests\/|^Python-urllib\//, 'Python'],
  [/^node-fetch\b|^undici\b|^node\b/i, 'Node.js'],
  [/^PostmanRuntime\//, 'Postman'],
];

const SYSTEMS: [RegExp, string][] = [
  [/\bWindows\b/, 'Windows'],
  [/\biPhone\b|\biPad\b|\biPod\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bUbuntu\b/, 'Ubuntu'],
  [/\bFreeBSD\b/, 'FreeBSD'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

function first(table: [RegExp, string][], text: string): string | null {
  for (const [pattern, name] of table) if (pattern.test(text)) return name;
  return null;
}

/** "Browser on System", either alone when the other is unknown, or "Unknown device". */
export function deviceOf(userAgent: string | null): string {
  const text = (userAgent ?? '').trim();
  if (text === '') return 'Unknown device';
  const browser = first(BROWSERS, text);
  const system = first(SYSTEMS, text);
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? 'Unknown device';
}
