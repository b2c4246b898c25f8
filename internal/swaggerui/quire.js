// Quire's docs page: Swagger UI over the API's own OpenAPI documents, one
// per version, chosen at the top of the page (the newest first). The page
// is served by the API it documents, and each document names the API's
// root, relative to itself, as its server: "Try it out" calls the API the
// page came from, the local gateway or the stage, under any base path. A
// successful login or token refresh made from the page authorizes the page
// with its access token; a logout takes it back. The Servers box shows the
// API's own address, and the bar names its selector the API's version.
// Served by make run, the page carries the demo customer's login
// (data-demo-login), which becomes POST /login's example body; a deployed
// stage's page carries none.
"use strict";
(function () {
  var base = location.pathname.replace(/\/docs$/, "");
  var demo = document.body.dataset.demoLogin ? JSON.parse(document.body.dataset.demoLogin) : null;
  var ui;
  function answered(res) {
    var path = new URL(res.url, location.href).pathname.slice(base.length);
    if (res.ok && (path === "/login" || path === "/tokens") && res.body && res.body.access_token) {
      ui.preauthorizeApiKey("bearer", res.body.access_token);
    } else if (res.ok && path === "/session") {
      ui.authActions.logout(["bearer"]);
    }
    return res;
  }
  // Each document as this page shows it: its server the API's own address
  // (the document names it relative to itself), and the demo login as
  // POST /login's example, when the page has one.
  var thisAPI = {
    statePlugins: {
      spec: {
        wrapActions: {
          updateJsonSpec: function (update) {
            return function (spec) {
              if (spec && spec.servers) {
                spec.servers = [{ url: location.origin + base, description: "This API: the one serving this page" }];
              }
              var credentials = demo && spec && spec.components && spec.components.schemas && spec.components.schemas.Credentials;
              if (credentials) {
                credentials.example = demo;
              }
              return update(spec);
            };
          },
        },
      },
    },
  };
  // The bar's selector is of the API's versions, not "definitions".
  new MutationObserver(function () {
    var label = document.querySelector(".download-url-wrapper .select-label span");
    if (label && label.textContent !== "API version") {
      label.textContent = "API version";
    }
  }).observe(document.getElementById("swagger-ui"), { childList: true, subtree: true });
  fetch(base + "/openapi.json")
    .then(function (res) {
      if (!res.ok) {
        throw new Error("GET " + base + "/openapi.json answered " + res.status);
      }
      return res.json();
    })
    .then(function (newest) {
      var urls = [];
      for (var v = Number(newest.info.version); v >= 1; v--) {
        urls.push({ url: base + "/api/v" + v + "/openapi.json", name: "v" + v });
      }
      ui = SwaggerUIBundle({
        urls: urls,
        "urls.primaryName": urls[0].name,
        dom_id: "#swagger-ui",
        deepLinking: true,
        displayRequestDuration: true,
        presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
        plugins: [thisAPI],
        layout: "StandaloneLayout",
        responseInterceptor: answered,
      });
    })
    .catch(function (err) {
      document.getElementById("swagger-ui").textContent = "The API's documents could not be loaded: " + err.message;
    });
})();
