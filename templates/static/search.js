// The search page: Pagefind's UI over this language's index (chosen by <html lang>).
(function () {
  "use strict";
  if (location.protocol === "file:") {
    // Pagefind fetches its index; browsers refuse that from file:// — say so instead of failing silently.
    document.getElementById("search-needs-http").hidden = false;
    return;
  }
  var box = document.getElementById("search");
  if (typeof PagefindUI === "undefined") {  // built with --no-search, as the live preview does
    document.getElementById("search-unavailable").hidden = false;
    return;
  }
  var ui = new PagefindUI({
    element: "#search",
    showSubResults: true,
    showImages: false,
    // The site's root, found from this page's own address: results work wherever the site is served.
    baseUrl: new URL(box.dataset.base, location.href).pathname,
    resetStyles: false,
    // Words per excerpt, per language (a Chinese "word" is a character or two): Pagefind's 12 with
    // sub-results is a fragment in Chinese.
    excerptLength: parseInt(box.dataset.excerpt, 10) || 24,
    translations: { placeholder: box.dataset.placeholder }
  });
  // Pagefind labels its input only with a title; name it for screen readers.
  var input = box.querySelector("input");
  if (input) input.setAttribute("aria-label", box.dataset.placeholder);
  var query = new URLSearchParams(location.search).get("q");
  if (query) ui.triggerSearch(query);
})();
