// lintaid viewer: live pages. Pages work without this file; it only refreshes the part of a
// page marked data-live="1" (the timeline's first page, a board's posts) when the daemon
// commits a write (server-sent events from /events).
(function () {
  "use strict";
  var list = document.querySelector("[data-live='1']");
  if (!list || list.dataset.live !== "1" || !window.EventSource || !window.fetch) {
    return;
  }
  var busy = false;
  var again = false;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(list.dataset.fragment, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html !== null) {
          list.innerHTML = html;
          list.dataset.refreshed = String(Number(list.dataset.refreshed || "0") + 1);
        }
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }
  var source = new EventSource(list.dataset.events);
  source.addEventListener("change", refresh);
  source.addEventListener("open", function () { list.dataset.connected = "1"; });
  window.addEventListener("pagehide", function () { source.close(); });
})();
