// Casefile: ticks the header timer's clock (the server keeps the time; this only updates the
// display between page loads). Loaded only while a timer runs.
"use strict";
(function () {
  var clocks = document.querySelectorAll("time.elapsed[data-running]");
  if (!clocks.length) {
    return;
  }
  var loaded = Date.now();
  function text(seconds) {
    var h = Math.floor(seconds / 3600);
    var m = Math.floor((seconds % 3600) / 60);
    var s = seconds % 60;
    return h + ":" + (m < 10 ? "0" : "") + m + ":" + (s < 10 ? "0" : "") + s;
  }
  window.setInterval(function () {
    var added = Math.floor((Date.now() - loaded) / 1000);
    clocks.forEach(function (clock) {
      var seconds = Number(clock.getAttribute("data-seconds")) + added;
      clock.textContent = text(seconds);
      clock.setAttribute("datetime", "PT" + seconds + "S");
    });
  }, 1000);
})();
