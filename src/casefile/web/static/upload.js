/* Casefile: uploads of several files at once, by drag and drop or the file field, each with its
   progress. Without this script the form uploads one file the plain way. No inline script: the
   Content-Security-Policy allows only files like this one. */
(function () {
  "use strict";
  var form = document.querySelector("form[data-upload]");
  if (!form || !window.FormData || !window.XMLHttpRequest || !window.DOMParser) { return; }
  var input = form.querySelector("input[type=file]");
  var zone = form.querySelector(".dropzone");
  var list = document.getElementById("upload-progress");
  input.multiple = true;
  input.required = false;

  function item(file) {
    var li = document.createElement("li");
    var name = document.createElement("span");
    name.className = "task-title";
    name.textContent = file.name;
    var bar = document.createElement("progress");
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute("aria-label", "Upload of " + file.name);
    var state = document.createElement("span");
    state.className = "upload-state";
    state.textContent = "Waiting";
    li.appendChild(name);
    li.appendChild(bar);
    li.appendChild(state);
    list.appendChild(li);
    return { li: li, bar: bar, state: state };
  }

  function failure(xhr) {
    // The error page's own words (its heading and message), read as text, never as markup.
    var doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
    var message = doc.querySelector(".error") || doc.querySelector("h1");
    return "Failed: " + (message ? message.textContent.trim() : "status " + xhr.status);
  }

  function send(file, row) {
    return new Promise(function (resolve) {
      var xhr = new XMLHttpRequest();
      var data = new FormData();
      data.append("file", file, file.name);
      xhr.upload.addEventListener("progress", function (event) {
        if (event.lengthComputable) { row.bar.value = Math.round(100 * event.loaded / event.total); }
      });
      xhr.addEventListener("load", function () {
        var ok = xhr.status >= 200 && xhr.status < 300;
        row.bar.value = ok ? 100 : row.bar.value;
        row.state.textContent = ok ? "Uploaded" : failure(xhr);
        row.li.className = ok ? "uploaded" : "failed";
        resolve(ok);
      });
      xhr.addEventListener("error", function () {
        row.state.textContent = "Failed: the connection was lost";
        row.li.className = "failed";
        resolve(false);
      });
      row.state.textContent = "Uploading";
      xhr.open("POST", form.action);
      xhr.setRequestHeader("HX-Request", "true");
      xhr.send(data);
    });
  }

  function upload(files) {
    if (!files || !files.length) { return; }
    files = Array.prototype.slice.call(files);  // the field's list empties when the field is reset
    var rows = [];
    for (var i = 0; i < files.length; i++) { rows.push(item(files[i])); }
    var chain = Promise.resolve(true);
    var allOk = true;
    files.forEach(function (file, n) {
      chain = chain.then(function () { return send(file, rows[n]); }).then(function (ok) { allOk = allOk && ok; });
    });
    chain.then(function () {
      input.value = "";
      if (allOk) { window.location.assign(window.location.pathname + "?uploaded=" + files.length); }
    });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    upload(input.files);
  });
  ["dragenter", "dragover"].forEach(function (name) {
    form.addEventListener(name, function (event) { event.preventDefault(); zone.classList.add("dragging"); });
  });
  form.addEventListener("dragleave", function () { zone.classList.remove("dragging"); });
  form.addEventListener("drop", function (event) {
    event.preventDefault();
    zone.classList.remove("dragging");
    upload(event.dataTransfer && event.dataTransfer.files);
  });
}());
