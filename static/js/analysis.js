// Live progress of analysis runs (researcher pages): every element with data-analysis-progress
// polls that JSON view and shows the stage and the status; when the run ends, the page reloads to
// show its report links. Without JavaScript the page still works (reload it by hand).
(function () {
  "use strict";
  document.querySelectorAll("[data-analysis-progress]").forEach(function (box) {
    var url = box.getAttribute("data-analysis-progress");
    var timer = setInterval(function () {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (p) {
          if (!p) { return; }
          box.querySelector("[data-field=status]").textContent = p.status;
          box.querySelector("[data-field=stage]").textContent = p.stage;
          var bar = box.querySelector("progress");
          if (bar) { bar.max = p.total || 1; bar.value = p.done; }
          if (p.status !== "queued" && p.status !== "running") {
            clearInterval(timer);
            window.location.reload();
          }
        })
        .catch(function () {});
    }, 2000);
  });
})();
