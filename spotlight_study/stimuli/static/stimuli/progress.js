// Live progress of stimulus jobs: every element with data-progress-url polls that JSON view and
// shows done/total and the status; when the job finishes, the page reloads to show the result.
// Without JavaScript the page still works (reload it by hand).
(function () {
  "use strict";
  var boxes = document.querySelectorAll("[data-progress-url]");
  boxes.forEach(function (box) {
    var url = box.getAttribute("data-progress-url");
    var timer = setInterval(function () {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (p) {
          if (!p) { return; }
          box.querySelector("[data-field=done]").textContent = p.done;
          box.querySelector("[data-field=total]").textContent = p.total;
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
