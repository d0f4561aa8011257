// The user's time zone by default: until they pick one (Settings), the browser's own, in the
// cookie the pages are rendered with (docs/web-app.md#time-zones). A cookie already set is kept.
(function () {
  "use strict";
  var set = document.cookie.split("; ").some(function (c) { return c.indexOf("casefile_tz=") === 0; });
  var zone = window.Intl && Intl.DateTimeFormat().resolvedOptions().timeZone;
  // An IANA name (Europe/Paris, America/Argentina/Buenos_Aires, Etc/GMT+5) needs no encoding.
  if (!set && zone && /^[A-Za-z0-9_+\-\/]+$/.test(zone)) {
    document.cookie = "casefile_tz=" + zone + "; path=/app; max-age=31536000; SameSite=Lax";
  }
})();
