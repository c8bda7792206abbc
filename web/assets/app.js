// git atlas web: reload the page's content when the ledger's refs change (server-sent
// events from /events). Without JavaScript the pages are the same, only not live.
(function () {
  "use strict";
  if (!window.EventSource || !window.fetch || !window.DOMParser) { return; }
  var dot = document.getElementById("live-dot");
  var busy = false, again = false;
  function reload() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { if (!r.ok) { throw new Error(r.status); } return r.text(); })
      .then(function (text) {
        var doc = new DOMParser().parseFromString(text, "text/html");
        var fresh = doc.getElementById("live"), old = document.getElementById("live");
        if (fresh && old) {
          old.replaceWith(document.adoptNode(fresh));
          document.body.setAttribute("data-updates", String(Number(document.body.getAttribute("data-updates") || "0") + 1));
        }
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; reload(); } });
  }
  var es = new EventSource("/events");
  es.addEventListener("open", function () { if (dot) { dot.classList.add("on"); } });
  es.addEventListener("error", function () { if (dot) { dot.classList.remove("on"); } });
  es.addEventListener("refs", reload);
})();
