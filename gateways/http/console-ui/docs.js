// Swagger UI (from the swagger-ui-dist npm package) over this service's generated OpenAPI document.
window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });
