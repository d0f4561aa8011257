// The browser's own time zone, in the cookie the pages are rendered with until the user picks a
// zone on their account (docs/web-app.md#time-zones). Kept up to date: a laptop that travels
// shows local times from its next page on.
(function () {
  "use strict";
  var zone = window.Intl && Intl.DateTimeFormat().resolvedOptions().timeZone;
  var current = document.cookie.split("; ").filter(function (c) { return c.indexOf("casefile_tz=") === 0; })[0];
  // An IANA name (Europe/Paris, America/Argentina/Buenos_Aires, Etc/GMT+5) needs no encoding.
  if (zone && /^[A-Za-z0-9_+\-\/]+$/.test(zone) && current !== "casefile_tz=" + zone) {
    document.cookie = "casefile_tz=" + zone + "; path=/app; max-age=31536000; SameSite=Lax";
  }
})();
