// Quire's docs page: Swagger UI over the API's own OpenAPI document. The
// page is served by the API it documents, so "Try it out" calls the API the
// page came from: the local gateway, or the stage, whose paths start with
// /prod. A successful login or token refresh made from the page authorizes
// the page with its access token; a logout takes it back.
"use strict";
(function () {
  var base = location.pathname.replace(/\/docs$/, "");
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
  fetch(base + "/openapi.json")
    .then(function (res) {
      if (!res.ok) {
        throw new Error("GET " + base + "/openapi.json answered " + res.status);
      }
      return res.json();
    })
    .then(function (spec) {
      spec.servers = [{ url: location.origin + base, description: "The API serving this page" }];
      ui = SwaggerUIBundle({
        spec: spec,
        dom_id: "#swagger-ui",
        deepLinking: true,
        displayRequestDuration: true,
        responseInterceptor: answered,
      });
    })
    .catch(function (err) {
      document.getElementById("swagger-ui").textContent = "The API's document could not be loaded: " + err.message;
    });
})();
