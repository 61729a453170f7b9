/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package dev.idempotency.spring.openapi;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.engine.StoreFailureMode;
import dev.idempotency.spring.IdempotencyKeySource;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.EndpointRule;
import dev.idempotency.spring.http.IdempotencyProblem;
import dev.idempotency.spring.http.IdempotentEndpoint;
import dev.idempotency.spring.web.HandlerMappingEndpointResolver;
import dev.idempotency.spring.web.IdempotencyFilter;
import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.examples.Example;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.parameters.HeaderParameter;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import org.jspecify.annotations.Nullable;
import org.springdoc.core.customizers.GlobalOpenApiCustomizer;
import org.springdoc.core.customizers.GlobalOperationComponentsCustomizer;

import org.springframework.http.server.PathContainer;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * springdoc-openapi customizer that documents what the {@link IdempotencyFilter} adds to
 * idempotent operations: the idempotency key header parameter (required or not), the
 * {@code application/problem+json} responses of the filter (400, 409, 410, 413 when the
 * operation has a request body, 422, and 503 when the policy fails closed), and the
 * {@value IdempotencyFilter#REPLAYED_HEADER} and
 * {@value IdempotencyFilter#EXPIRES_HEADER} headers of the success responses.
 * <p>
 * Which operations are idempotent is decided as the filter decides it: a handler method
 * is looked up in the {@link HandlerMappingEndpointResolver} (so {@link Idempotent} on a
 * class covers only mappings that accept an unsafe HTTP method), and an operation of no
 * idempotent handler is checked against the configured {@link EndpointRule rules} by its
 * HTTP method and path template. A rule whose pattern is narrower than the operation's
 * path template (a literal {@code /orders/42} for {@code /orders/{id}}) does not cover
 * the whole operation and is not documented.
 * <p>
 * Nothing the application documented is replaced: a response code that is already
 * present, a header parameter of the key header's name and a response header of the same
 * name are left as they are. The problem responses refer to a shared
 * {@value #PROBLEM_SCHEMA} schema component, added unless one of that name exists.
 * <p>
 * Thread-safe; calling it again on a customized operation or document changes nothing.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotencyOperationCustomizer
		implements GlobalOperationComponentsCustomizer, GlobalOpenApiCustomizer {

	/**
	 * Name of the schema component of the problem details.
	 */
	public static final String PROBLEM_SCHEMA = "ProblemDetail";

	/**
	 * Media type of the problem details.
	 */
	static final String PROBLEM_MEDIA_TYPE = "application/problem+json";

	private static final String PROBLEM_SCHEMA_REF = Components.COMPONENTS_SCHEMAS_REF + PROBLEM_SCHEMA;

	/**
	 * The extension that documents where in the request body an operation's key is.
	 */
	static final String BODY_KEY_EXTENSION = "x-idempotency-key";

	private static final String KEY_PATTERN = "^[\\x21-\\x7E]+$";

	private static final String KEY_EXAMPLE = "8e03978e-40d5-43e8-bc93-6894a57f9324";

	private final HandlerMappingEndpointResolver resolver;

	private final NamedPolicies policies;

	private final List<RulePattern> rules;

	private final String keyHeader;

	// lower case: the key header and every policy's own
	private final Set<String> keyHeaders;

	private final String problemTypeBase;

	private final boolean expiresHeader;

	/**
	 * Create a customizer.
	 * @param resolver the resolver the filter uses, never {@code null}
	 * @param policies the configured policies, never {@code null}
	 * @param keyHeader the name of the key header, never {@code null}
	 * @param problemTypeBase the base of the problems' type URIs, never {@code null}
	 * @param expiresHeader whether responses carry the
	 * {@value IdempotencyFilter#EXPIRES_HEADER} header
	 */
	public IdempotencyOperationCustomizer(HandlerMappingEndpointResolver resolver, NamedPolicies policies,
			String keyHeader, String problemTypeBase, boolean expiresHeader) {
		this.resolver = Objects.requireNonNull(resolver, "'resolver' must not be null");
		this.policies = Objects.requireNonNull(policies, "'policies' must not be null");
		this.keyHeader = Objects.requireNonNull(keyHeader, "'keyHeader' must not be null");
		Set<String> keyHeaders = new HashSet<>();
		keyHeaders.add(keyHeader.toLowerCase(Locale.ROOT));
		for (NamedPolicy policy : policies.all()) {
			String header = policy.keySource().header();
			if (header != null) {
				keyHeaders.add(header.toLowerCase(Locale.ROOT));
			}
		}
		this.keyHeaders = Set.copyOf(keyHeaders);
		this.problemTypeBase = Objects.requireNonNull(problemTypeBase, "'problemTypeBase' must not be null");
		this.expiresHeader = expiresHeader;
		List<RulePattern> patterns = new ArrayList<>();
		for (EndpointRule rule : resolver.getRules()) {
			patterns.add(new RulePattern(rule, PathPatternParser.defaultInstance.parse(rule.path())));
		}
		this.rules = List.copyOf(patterns);
	}

	@Override
	public Operation customize(Operation operation, Components components, HandlerMethod handlerMethod) {
		Operation customized = customize(operation, handlerMethod);
		if (isDocumented(customized)) {
			addProblemSchema(components);
		}
		return customized;
	}

	@Override
	public Operation customize(Operation operation, HandlerMethod handlerMethod) {
		IdempotentEndpoint endpoint = this.resolver.findEndpoint(handlerMethod);
		if (endpoint != null) {
			document(operation, endpoint);
		}
		return operation;
	}

	/**
	 * Document the operations that only a configured rule makes idempotent, and add the
	 * problem schema if an operation refers to it.
	 * @param openApi the document, never {@code null}
	 */
	@Override
	public void customise(OpenAPI openApi) {
		boolean documented = false;
		if (openApi.getPaths() != null) {
			for (Map.Entry<String, PathItem> path : openApi.getPaths().entrySet()) {
				for (Map.Entry<PathItem.HttpMethod, Operation> entry : path.getValue().readOperationsMap().entrySet()) {
					Operation operation = entry.getValue();
					if (!isDocumented(operation)) {
						IdempotentEndpoint endpoint = matchRule(entry.getKey().name(), path.getKey());
						if (endpoint != null) {
							document(operation, endpoint);
						}
					}
					documented = documented || isDocumented(operation);
				}
			}
		}
		if (documented) {
			if (openApi.getComponents() == null) {
				openApi.setComponents(new Components());
			}
			addProblemSchema(openApi.getComponents());
		}
	}

	private @Nullable IdempotentEndpoint matchRule(String method, String path) {
		PathContainer container = PathContainer.parsePath(path);
		for (RulePattern rule : this.rules) {
			if (rule.rule().methods().contains(method) && rule.pattern().matches(container)) {
				return rule.rule().endpoint();
			}
		}
		return null;
	}

	private boolean isDocumented(Operation operation) {
		if (operation.getExtensions() != null && operation.getExtensions().containsKey(BODY_KEY_EXTENSION)) {
			return true;
		}
		if (operation.getParameters() != null) {
			for (Parameter parameter : operation.getParameters()) {
				if ("header".equals(parameter.getIn()) && parameter.getName() != null
						&& this.keyHeaders.contains(parameter.getName().toLowerCase(Locale.ROOT))) {
					return true;
				}
			}
		}
		return false;
	}

	private @Nullable Parameter findKeyParameter(Operation operation, String header) {
		if (operation.getParameters() != null) {
			for (Parameter parameter : operation.getParameters()) {
				if ("header".equals(parameter.getIn()) && header.equalsIgnoreCase(parameter.getName())) {
					return parameter;
				}
			}
		}
		return null;
	}

	private void document(Operation operation, IdempotentEndpoint endpoint) {
		NamedPolicy policy = this.policies.get(endpoint.policy());
		IdempotencyKeySource source = (policy != null) ? policy.keySource() : IdempotencyKeySource.keyHeader();
		if (source.isBody()) {
			// OpenAPI has no place for a parameter inside the body: an extension names it
			operation.addExtension(BODY_KEY_EXTENSION, Map.of("in", "body", "json-pointer", source.jsonPointer()));
		}
		else {
			String header = (source.header() != null) ? source.header() : this.keyHeader;
			if (findKeyParameter(operation, header) == null) {
				operation.addParametersItem(keyParameter(header, endpoint.required(), source.header() == null));
			}
		}
		if (operation.getResponses() == null) {
			operation.setResponses(new ApiResponses());
		}
		ApiResponses responses = operation.getResponses();
		for (Map.Entry<String, ApiResponse> response : responses.entrySet()) {
			if (response.getKey().startsWith("2")) {
				addSuccessHeaders(response.getValue());
			}
		}
		boolean required = endpoint.required() || source.isBody();
		List<IdempotencyProblem> badRequest = required
				? List.of(IdempotencyProblem.KEY_MISSING, IdempotencyProblem.KEY_INVALID)
				: List.of(IdempotencyProblem.KEY_INVALID);
		addProblem(responses, "400",
				"The idempotency key is " + (required ? "missing or " : "") + "malformed; the handler did not run.",
				badRequest, false);
		addProblem(responses, "409",
				"A request with this key is still being processed; retry after the 'Retry-After' seconds.",
				List.of(IdempotencyProblem.REQUEST_IN_PROGRESS), true);
		addProblem(responses, "410",
				"The first response under this key was too large to keep for replay; retrying does not help.",
				List.of(IdempotencyProblem.RESPONSE_NOT_REPLAYABLE), false);
		if (operation.getRequestBody() != null) {
			addProblem(responses, "413",
					"The request body exceeds the size accepted for idempotent requests; the handler did not run.",
					List.of(IdempotencyProblem.REQUEST_TOO_LARGE), false);
		}
		addProblem(responses, "422",
				"The key was already used for a different request (method, path, query, headers or body).",
				List.of(IdempotencyProblem.KEY_REUSED), false);
		if (policy != null && policy.transactional()) {
			addProblem(responses, "500",
					"The request's transaction could not commit (the cause is in the detail): nothing of it was"
							+ " processed, and a retry with the same key runs it again.",
					List.of(IdempotencyProblem.TRANSACTION_ROLLED_BACK), false);
		}
		if (policy == null || policy.engine().onStoreFailure() == StoreFailureMode.FAIL_CLOSED) {
			addProblem(responses, "503",
					"The idempotency store is unavailable, so the request was not processed; retry after the "
							+ "'Retry-After' seconds.",
					List.of(IdempotencyProblem.STORE_UNAVAILABLE), true);
		}
	}

	private Parameter keyParameter(String header, boolean required, boolean clientChosen) {
		Schema<String> schema = schema("string");
		schema.minLength(1).maxLength(IdempotencyKey.MAX_KEY_LENGTH).pattern(KEY_PATTERN);
		String description = (clientChosen ? "Key chosen by the client (for example a random UUID)"
				: "Identifier of the delivery (for example a webhook's message id)")
				+ " that makes retries of this request safe: the first request with a key runs, every retry with"
				+ " the same key gets the stored response. 1 to " + IdempotencyKey.MAX_KEY_LENGTH
				+ " visible ASCII characters, sent once, as a token or as an RFC 8941 quoted string."
				+ (required ? "" : " Optional: a request without a key runs without protection.");
		return new HeaderParameter().name(header)
			.required(required)
			.description(description)
			.schema(schema)
			.example(KEY_EXAMPLE);
	}

	private void addSuccessHeaders(ApiResponse response) {
		if (!hasHeader(response, IdempotencyFilter.REPLAYED_HEADER)) {
			Schema<String> schema = schema("string");
			schema.addEnumItemObject("true");
			response.addHeaderObject(IdempotencyFilter.REPLAYED_HEADER,
					new Header()
						.description("'true' when this response is the stored response of an earlier "
								+ "request with the same key, replayed without running the handler.")
						.schema(schema));
		}
		if (this.expiresHeader && !hasHeader(response, IdempotencyFilter.EXPIRES_HEADER)) {
			response.addHeaderObject(IdempotencyFilter.EXPIRES_HEADER,
					new Header()
						.description("When the record of the key expires, as an HTTP date: until then "
								+ "a retry with the key is answered with this response.")
						.schema(schema("string")));
		}
	}

	private static boolean hasHeader(ApiResponse response, String name) {
		if (response.getHeaders() != null) {
			for (String header : response.getHeaders().keySet()) {
				if (header.equalsIgnoreCase(name)) {
					return true;
				}
			}
		}
		return false;
	}

	private void addProblem(ApiResponses responses, String code, String description, List<IdempotencyProblem> problems,
			boolean retryAfter) {
		if (responses.containsKey(code)) {
			return;
		}
		MediaType mediaType = new MediaType().schema(new Schema<>().$ref(PROBLEM_SCHEMA_REF));
		for (IdempotencyProblem problem : problems) {
			Map<String, Object> value = new LinkedHashMap<>();
			value.put("type", this.problemTypeBase + problem.slug());
			value.put("title", problem.title());
			value.put("status", problem.status());
			mediaType.addExamples(problem.slug(), new Example().summary(problem.title()).value(value));
		}
		ApiResponse response = new ApiResponse().description(description)
			.content(new Content().addMediaType(PROBLEM_MEDIA_TYPE, mediaType));
		if (retryAfter) {
			Schema<Integer> seconds = schema("integer");
			seconds.minimum(BigDecimal.ONE);
			response.addHeaderObject("Retry-After",
					new Header().description("Seconds to wait before retrying, at least 1.").schema(seconds));
		}
		responses.addApiResponse(code, response);
	}

	private static void addProblemSchema(Components components) {
		if (components.getSchemas() != null && components.getSchemas().containsKey(PROBLEM_SCHEMA)) {
			return;
		}
		Schema<Object> schema = schema("object");
		schema.description("RFC 9457 problem details.")
			.addProperty("type", schema("string").format("uri").description("URI of the problem type."))
			.addProperty("title", schema("string").description("Short summary of the problem type."))
			.addProperty("status", schema("integer").format("int32").description("HTTP status code."))
			.addProperty("detail", schema("string").description("Explanation of this occurrence."))
			.addProperty("instance", schema("string").format("uri-reference").description("The request path."))
			.addProperty("idempotencyKey",
					schema("string").description("The idempotency key of the request, when it had a valid one."))
			.addProperty("originalStatus", schema("integer").format("int32")
				.description("Status of the first response, when it could not be replayed."));
		components.addSchemas(PROBLEM_SCHEMA, schema);
	}

	private static <T> Schema<T> schema(String type) {
		Schema<T> schema = new Schema<>();
		// 'type' is written by OpenAPI 3.0, 'types' by OpenAPI 3.1
		schema.type(type);
		schema.addType(type);
		return schema;
	}

	/**
	 * A configured rule with its parsed path pattern.
	 */
	private record RulePattern(EndpointRule rule, PathPattern pattern) {

	}

}
