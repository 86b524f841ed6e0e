// Enhancements only: every page reads fully without this file.
(function () {
  "use strict";
  // Keep the reader's section when switching language: the twin page has the same heading ids.
  // (On a side-by-side page the translation's ids carry a prefix: the section is the source column's.)
  var main = document.querySelector("main");
  var prefix = main && main.getAttribute("data-prefix");
  function currentSection() {
    var heads = document.querySelectorAll("main h2[id], main h3[id]");
    var current = null;
    for (var i = 0; i < heads.length; i++) {
      if (prefix && heads[i].id.indexOf(prefix) === 0) continue;
      if (heads[i].getBoundingClientRect().top <= 100) current = heads[i].id; else break;
    }
    return current;
  }
  document.querySelectorAll("[data-lang-switch], [data-keep-section]").forEach(function (link) {
    link.addEventListener("click", function () {
      var id = currentSection() || (location.hash ? location.hash.slice(1) : null);
      if (id && prefix && id.indexOf(prefix) === 0) id = id.slice(prefix.length);
      var base = link.getAttribute("href").split("#")[0];
      link.setAttribute("href", id ? base + "#" + id : base);
      if (link.hasAttribute("data-lang-switch")) {
        try { localStorage.setItem("lessonkit-lang", link.getAttribute("hreflang")); } catch (e) { /* private mode */ }
      }
    });
  });
  // The course home puts the reader's language first once they have chosen one.
  var preferred = null;
  try { preferred = localStorage.getItem("lessonkit-lang"); } catch (e) { /* private mode */ }
  document.querySelectorAll(".home-lang").forEach(function (section) {
    if (preferred && section.getAttribute("lang") === preferred) {
      section.style.order = "-1";
      section.setAttribute("data-preferred", "true");
    }
    section.querySelectorAll("a[hreflang]").forEach(function (a) {
      a.addEventListener("click", function () {
        try { localStorage.setItem("lessonkit-lang", a.getAttribute("hreflang")); } catch (e) { /* private mode */ }
      });
    });
  });
  // The audit layer: remembered per reader; page.html#audit-layer opens it (the stylesheet does that alone
  // with JavaScript off, until another link changes the address; here the switch alone decides).
  document.documentElement.setAttribute("data-js", "");
  var layer = document.getElementById("audit-layer");
  if (layer) {
    var remembered = null;
    try { remembered = localStorage.getItem("lessonkit-layer"); } catch (e) { /* private mode */ }
    if (remembered === "audit" || location.hash === "#audit-layer") layer.checked = true;
    // The marks in the text (audit marks, a value's ✓ or a parameter's number) are tab stops in the audit
    // layer only.
    var marks = function () {
      document.querySelectorAll("main .audit-mark[data-label], main .value > a").forEach(function (m) {
        m.setAttribute("tabindex", layer.checked ? "0" : "-1");
      });
    };
    marks();
    layer.addEventListener("change", function () {
      marks();
      try { localStorage.setItem("lessonkit-layer", layer.checked ? "audit" : "reading"); } catch (e) { /* private mode */ }
    });
  }
  // A mark in the text (an audit mark, a value's ✓ or a parameter's number) leads to its panel on the page's
  // evidence page; here the panel opens in place, as a popover, with the evidence page fetched once. Should
  // the fetch fail (a page read from file://), the link is followed.
  var fetched = {};
  var closeLabel = main ? main.getAttribute("data-close") || "×" : "×";
  function evidence(url) {
    fetched[url] = fetched[url] || fetch(url).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.text();
    }).then(function (text) { return new DOMParser().parseFromString(text, "text/html"); });
    return fetched[url];
  }
  function markOf(e) {
    var link = e.target.closest && e.target.closest("a.audit-mark[data-label], .value > a");
    return link && link.href.indexOf(".evidence.html#") >= 0 ? link : null;
  }
  function openInPlace(link) {
    var parts = link.getAttribute("href").split("#");
    var url = parts[0], id = parts[1];
    var shown = document.getElementById(id);
    if (shown && shown.hasAttribute("popover")) { show(shown, link); return; }
    evidence(url).then(function (doc) {
      var panel = doc.getElementById(id);
      if (!panel) throw new Error(id);
      panel = document.importNode(panel, true);
      // Its links as the evidence page has them: to its own places there (to this page's, here), and any
      // other relative address from where the evidence page is (a side-by-side page is elsewhere).
      var base = new URL(url, location.href);
      panel.querySelectorAll("a[href]").forEach(function (a) {
        var href = a.getAttribute("href");
        if (href.charAt(0) === "#") {
          if (!document.getElementById(href.slice(1))) a.setAttribute("href", url + href);
        } else if (!/^[a-z][a-z0-9+.-]*:/i.test(href)) {
          a.setAttribute("href", new URL(href, base).href);
        }
      });
      panel.setAttribute("popover", "");
      panel.setAttribute("role", "dialog");
      var close = document.createElement("button");
      close.type = "button";
      close.className = "prov-close";
      close.textContent = closeLabel;
      close.setAttribute("popovertarget", id);
      close.setAttribute("popovertargetaction", "hide");
      panel.insertBefore(close, panel.firstChild);
      // Closed, focus goes back to the mark that opened it; not when another panel has opened meanwhile.
      panel.addEventListener("toggle", function (e) {
        if (e.newState === "closed" && panel.opener && !document.querySelector(".prov:popover-open")) panel.opener.focus();
      });
      document.body.appendChild(panel);
      show(panel, link);
    }).catch(function () { location.href = link.href; });
  }
  function show(panel, link) {
    panel.opener = link;
    panel.showPopover();
    panel.querySelector(".prov-close").focus();
  }
  if (main && window.fetch && HTMLElement.prototype.showPopover) {
    main.addEventListener("click", function (e) {
      var link = markOf(e);
      if (!link || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      openInPlace(link);
    });
    // Fetched when a pointer or the focus reaches a mark: on a slow network the panel is there by the click.
    var warm = function (e) {
      var link = markOf(e);
      if (link) evidence(link.getAttribute("href").split("#")[0]).catch(function () { /* followed on click */ });
    };
    main.addEventListener("pointerover", warm);
    main.addEventListener("focusin", warm);
  }
  // On a narrow screen the contents start folded, so the text comes first (open without JS).
  var toc = document.querySelector(".toc details");
  if (toc && window.matchMedia("(max-width: 1099px)").matches) toc.open = false;
  // Highlight the current section in the contents as the reader scrolls.
  var tocLinks = document.querySelectorAll(".toc a[href^='#']");
  if (tocLinks.length) {
    var onScroll = function () {
      var id = currentSection();
      tocLinks.forEach(function (a) {
        if (a.getAttribute("href") === "#" + id) a.setAttribute("aria-current", "true");
        else a.removeAttribute("aria-current");
      });
    };
    document.addEventListener("scroll", onScroll, { passive: true });
    onScroll();
  }
})();
