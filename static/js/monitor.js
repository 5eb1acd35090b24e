/* Live monitor: replaces the rows (tbody) of #monitor every few seconds from the rows URL.
 *
 * The page works without this file (reload to refresh). Refreshing pauses while the tab is
 * hidden and resumes, with an immediate refresh, when it is shown again. A failed request
 * (network error, expired login, bad filters) keeps the rows shown and says so in the summary.
 */
(function () {
  "use strict";
  var table = document.getElementById("monitor");
  if (!table || !window.fetch || !window.DOMParser) { return; }
  var url = table.getAttribute("data-refresh-url");
  var seconds = parseInt(table.getAttribute("data-refresh-seconds"), 10) || 5;
  var summary = document.getElementById("monitor-summary");
  var timer = null;
  var busy = false;

  function schedule() {
    clearTimeout(timer);
    timer = document.hidden ? null : setTimeout(refresh, seconds * 1000);
  }

  function fail(message) {
    if (summary) { summary.textContent = message; }
  }

  function refresh() {
    if (busy || document.hidden) { return; }
    busy = true;
    table.setAttribute("aria-busy", "true");  // the rows are being replaced (also for tests)
    fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" }, redirect: "manual" })
      .then(function (response) {
        if (!response.ok) { throw new Error("status " + response.status); }
        return response.text();
      })
      .then(function (html) {
        // A tbody parses only inside a table.
        var doc = new DOMParser().parseFromString("<table>" + html + "</table>", "text/html");
        var rows = doc.getElementById("monitor-rows");
        var current = document.getElementById("monitor-rows");
        if (!rows || !current) { throw new Error("no rows in the answer"); }
        current.replaceWith(document.importNode(rows, true));
        if (summary && rows.getAttribute("data-summary")) {
          summary.textContent = rows.getAttribute("data-summary");
        }
      })
      .catch(function () {
        fail("The automatic refresh failed (are you still logged in?). Reload the page to try again.");
      })
      .then(function () { busy = false; table.removeAttribute("aria-busy"); schedule(); });
  }

  document.addEventListener("visibilitychange", function () {
    if (document.hidden) { clearTimeout(timer); timer = null; } else { refresh(); }
  });
  schedule();
}());
