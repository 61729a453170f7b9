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

package dev.idempotency.spring.web;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Execution;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.IdempotencyProblem;
import dev.idempotency.spring.http.Refusal;
import dev.idempotency.spring.http.StoredHeaders;
import dev.idempotency.spring.observation.IdempotencyObservation;
import dev.idempotency.spring.transaction.RequestTransaction;
import io.micrometer.observation.Observation;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestEvent;
import jakarta.servlet.ServletRequestListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.web.util.WebUtils;

/**
 * An execution whose handler runs: the state it carries, as a request attribute, across
 * the dispatches of its request, until its response is stored (the key completes) or it
 * is given up (the key is released so that a retry runs the handler again).
 * <p>
 * An asynchronous handler completes from the async dispatch that ends it. A handler that
 * calls {@code sendError} with a storable status completes from the error dispatch that
 * renders the error page, so that the page is replayed too; if no error dispatch follows,
 * the {@link CleanupListener} releases the key when the request ends. A handler that
 * throws releases it at once.
 * <p>
 * On a transactional endpoint the execution runs in its request's
 * {@link RequestTransaction}: the transaction commits once the response is stored, before
 * the response is written, and is rolled back whenever the key is released. A response
 * that does not commit never reaches the client: it is answered with the
 * {@code idempotency-store-unavailable} problem, and nothing of the request persisted;
 * when the connection failed during the commit, so that the transaction may have
 * committed all the same, the problem says that the outcome is unknown. Such an execution
 * neither waits for an error dispatch (the error page of a {@code sendError} is not
 * stored: the key is released) nor streams a body over the limit (the handler's write
 * fails), since either would answer the client before the commit.
 *
 * @author Idempotency contributors
 */
final class PendingExecution {

	private static final String ATTRIBUTE = "dev.idempotency.spring.web.IdempotencyFilter.CALL";

	private static final Log logger = LogFactory.getLog(PendingExecution.class);

	private final Execution execution;

	private final NamedPolicy policy;

	private final IdempotencyObservation observation;

	private final StoredHeaders storedHeaders;

	private final ReplayWriter replays;

	private final ProblemWriter problems;

	private final @Nullable RequestTransaction transaction;

	private final @Nullable StoredResponseCustomizer customizer;

	private CapturingResponseWrapper capture;

	private volatile boolean awaitingErrorDispatch;

	private boolean asyncListenerAdded;

	/**
	 * Create the state of an execution that is about to run its handler.
	 * @param execution the execution
	 * @param exchange the request's exchange: its policy, observation and response, and
	 * the settings of the filter
	 * @param transaction the request's transaction on a transactional endpoint, else
	 * {@code null}
	 */
	PendingExecution(Execution execution, IdempotentExchange exchange, @Nullable RequestTransaction transaction) {
		this.execution = execution;
		this.policy = exchange.policy();
		this.observation = exchange.observation();
		this.storedHeaders = exchange.requests().storedHeaders();
		this.replays = exchange.requests().replays();
		this.problems = exchange.requests().problems();
		this.transaction = transaction;
		this.customizer = exchange.requests().storedResponseCustomizer();
		this.capture = capture(exchange.response());
	}

	/**
	 * Return the execution pending on a request, if any.
	 * @param request the request
	 * @return the execution, or {@code null}
	 */
	static @Nullable PendingExecution of(ServletRequest request) {
		return (PendingExecution) request.getAttribute(ATTRIBUTE);
	}

	/**
	 * Run the handler for the first time, capturing its response.
	 * @param request the request
	 * @param chain the rest of the chain
	 * @throws ServletException if the chain throws it
	 * @throws IOException if the chain or writing the response throws it
	 */
	void run(HttpServletRequest request, FilterChain chain) throws ServletException, IOException {
		request.setAttribute(ATTRIBUTE, this);
		dispatch(request, this.capture, chain);
	}

	/**
	 * Go on with a later dispatch of the request: the async dispatch that ends an
	 * asynchronous handler, or the error dispatch that renders the error page to store.
	 * Any other dispatch gives the execution up and passes the request on.
	 * @param request the request
	 * @param response the response of this dispatch
	 * @param chain the rest of the chain
	 * @throws ServletException if the chain throws it
	 * @throws IOException if the chain or writing the response throws it
	 */
	void resume(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		try (Observation.Scope scope = this.observation.openScope()) {
			resumeObserved(request, response, chain);
		}
		catch (Throwable ex) {
			this.observation.fail(ex);
			throw ex;
		}
		if (of(request) != this) {
			this.observation.stop();
		}
	}

	private void resumeObserved(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		DispatcherType type = request.getDispatcherType();
		if (type == DispatcherType.ASYNC && !this.awaitingErrorDispatch) {
			CapturingResponseWrapper capture = WebUtils.getNativeResponse(response, CapturingResponseWrapper.class);
			dispatch(request, (capture != null) ? capture : this.capture, chain);
		}
		else if (type == DispatcherType.ERROR && this.awaitingErrorDispatch) {
			// the error page of a storable sendError: capture and store it
			this.awaitingErrorDispatch = false;
			this.capture = capture(response);
			dispatch(request, this.capture, chain);
		}
		else {
			abandon(request);
			chain.doFilter(request, response);
		}
	}

	private CapturingResponseWrapper capture(HttpServletResponse response) {
		if (this.transaction != null) {
			return new CapturingResponseWrapper(response, this.policy.maxResponseBody(), () -> {
				throw new IllegalStateException("The response of key '" + this.execution.key()
						+ "' is larger than max-response-body (" + this.policy.maxResponseBody()
						+ " bytes): a transactional endpoint cannot send a response before it is committed");
			});
		}
		return new CapturingResponseWrapper(response, this.policy.maxResponseBody(),
				// the body is too large to keep: it goes to the client before completion
				() -> this.replays.writeExpiryBeforeStreaming(response, this.execution));
	}

	private void dispatch(HttpServletRequest request, CapturingResponseWrapper capture, FilterChain chain)
			throws ServletException, IOException {
		try {
			chain.doFilter(request, capture);
			afterDispatch(request, capture);
		}
		catch (Throwable ex) {
			// the handler threw (Spring's error handling did not turn it into a
			// response): release so that a retry runs it again; a no-op once completed
			this.observation.error(ex);
			abandon(request);
			throw ex;
		}
	}

	private void afterDispatch(HttpServletRequest request, CapturingResponseWrapper capture) throws IOException {
		if (request.isAsyncStarted()) {
			if (this.transaction != null) {
				// the transaction cannot follow the handler to another thread
				logger.error("Handler of key '" + this.execution.key() + "' (policy '" + this.policy.name()
						+ "') went asynchronous on a transactional endpoint: its work is not part of the"
						+ " request's transaction, which is rolled back, and the key is released");
				abandon(request);
				return;
			}
			awaitAsync(request);
			return;
		}
		if (capture.isErrorSent()) {
			if (this.transaction != null || request.getDispatcherType() == DispatcherType.ERROR
					|| this.execution.policy().nonStorableStatuses().contains(capture.getStatus())) {
				// a transient error, or one whose page cannot be captured: the next
				// request runs the handler again
				abandon(request);
				return;
			}
			// complete from the error dispatch that renders the error page
			this.awaitingErrorDispatch = true;
			return;
		}
		complete(request, capture);
	}

	private void complete(HttpServletRequest request, CapturingResponseWrapper capture) throws IOException {
		request.removeAttribute(ATTRIBUTE);
		capture.flushWriter();
		int status = capture.getStatus();
		List<HttpHeader> headers = this.storedHeaders.capture(capture.getContentType(), capture.getHeaderNames(),
				capture::getHeaders);
		boolean streaming = capture.isStreaming();
		StoredResponse produced = streaming ? StoredResponse.withoutBody(status, headers)
				: new StoredResponse(status, headers, capture.bufferedBody());
		if (this.customizer != null) {
			produced = customize(this.customizer, request, produced);
		}
		// only what every instance can read back: beyond the codec's limits, the status
		// and the headers that fit, as for a body over max-response-body
		StoredResponse stored = StoredResponseCodec.fitToLimits(produced);
		CompletionOutcome outcome;
		if (this.transaction != null) {
			RequestTransaction.Ending ending = this.transaction.complete(this.execution, stored);
			if (!endTransaction(ending, status, request, capture)) {
				return;
			}
			outcome = (ending.kind() == RequestTransaction.Ending.Kind.COMMITTED) ? CompletionOutcome.STORED
					: CompletionOutcome.RELEASED;
		}
		else {
			outcome = this.execution.complete(stored);
		}
		if (outcome == CompletionOutcome.STORED && !stored.isBodyRetained()) {
			logger.warn("Response of key '" + this.execution.key() + "' (policy '" + this.policy.name() + "') "
					+ (streaming ? "is larger than max-response-body (" + this.policy.maxResponseBody() + " bytes)"
							: "has more headers than a stored response can hold (" + headers.size()
									+ " headers; at most " + StoredResponseCodec.MAX_HEADER_COUNT + " and "
									+ StoredResponseCodec.MAX_HEADER_BYTES + " bytes of names and values)")
					+ ": only its status and the headers that fit were stored, and a retry is answered with the '"
					+ IdempotencyProblem.RESPONSE_NOT_REPLAYABLE.slug() + "' problem");
		}
		if (streaming) {
			capture.flushBuffer();
			return;
		}
		if (outcome == CompletionOutcome.STORED) {
			this.replays.writeExpiry((HttpServletResponse) capture.getResponse(), this.execution);
		}
		capture.writeBufferedBody();
	}

	private StoredResponse customize(StoredResponseCustomizer customizer, HttpServletRequest request,
			StoredResponse produced) {
		try {
			return Objects.requireNonNull(customizer.customize(request, this.policy.name(), produced),
					"StoredResponseCustomizer returned null");
		}
		catch (RuntimeException ex) {
			logger.error("StoredResponseCustomizer failed on key '" + this.execution.key() + "' (policy '"
					+ this.policy.name() + "'): only the status is stored", ex);
			return StoredResponse.withoutBody(produced.status(), List.of());
		}
	}

	// Whether the client gets the handler's response after the request's transaction
	// ended so; false when it must not (a success whose work did not commit), and the
	// client is answered with the problem that names why instead
	private boolean endTransaction(RequestTransaction.Ending ending, int status, HttpServletRequest request,
			CapturingResponseWrapper capture) throws IOException {
		RequestTransaction.Ending.Kind kind = ending.kind();
		if (kind == RequestTransaction.Ending.Kind.COMMITTED || kind == RequestTransaction.Ending.Kind.RELEASED) {
			return true;
		}
		boolean handlerAnswers = ending.answersWithHandlerResponse(status);
		logger.warn("Transaction of key '" + this.execution.key() + "' (policy '" + this.policy.name() + "') "
				+ ((kind == RequestTransaction.Ending.Kind.OUTCOME_UNKNOWN)
						? "lost its connection during the commit: whether it committed is unknown (a retry is answered"
								+ " with the stored response if it did, or runs the handler again)"
						: "was rolled back: " + ending.reason() + "; nothing of the request persisted and the key is"
								+ " free")
				+ (handlerAnswers ? "; the client is answered with the handler's status " + status
						: "; the client is answered with a problem"),
				ending.failure());
		if (handlerAnswers) {
			this.observation.completionOverridden(CompletionOutcome.RELEASED);
			return true;
		}
		this.observation.error((ending.failure() != null) ? ending.failure()
				: new IllegalStateException("Transaction rolled back: " + ending.reason()));
		this.observation.completionOverridden(CompletionOutcome.FAILED);
		HttpServletResponse response = (HttpServletResponse) capture.getResponse();
		response.reset();
		String key = this.execution.key().key();
		Duration retryAfter = Refusal.wholeSeconds(this.execution.policy().unavailableRetryAfter());
		Refusal refusal = switch (kind) {
			case OUTCOME_UNKNOWN -> Refusal.commitOutcomeUnknown(key, retryAfter);
			case CONNECTION_LOST -> Refusal.storeUnavailable(key, retryAfter);
			default -> Refusal.rolledBack(key, String.valueOf(ending.reason()));
		};
		// the observation keeps the outcome of an execution, with the completion
		// overridden
		this.problems.write(request, response, refusal);
		return false;
	}

	private void abandon(HttpServletRequest request) {
		request.removeAttribute(ATTRIBUTE);
		this.execution.close();
		if (this.transaction != null) {
			this.transaction.rollback();
		}
	}

	private void awaitAsync(HttpServletRequest request) {
		if (!this.asyncListenerAdded) {
			this.asyncListenerAdded = true;
			request.getAsyncContext().addListener(new AsyncListener() {

				@Override
				public void onComplete(AsyncEvent event) {
					// normally ended by the async dispatch already; otherwise release
					PendingExecution.this.execution.close();
					PendingExecution.this.observation.stop();
				}

				@Override
				public void onTimeout(AsyncEvent event) {
				}

				@Override
				public void onError(AsyncEvent event) {
				}

				@Override
				public void onStartAsync(AsyncEvent event) {
				}

			});
		}
	}

	/**
	 * Releases the key of an execution that is still pending when its request ends,
	 * because the error dispatch it waited for never came.
	 */
	static final class CleanupListener implements ServletRequestListener {

		@Override
		public void requestDestroyed(ServletRequestEvent event) {
			Object attribute = event.getServletRequest().getAttribute(ATTRIBUTE);
			if (attribute instanceof PendingExecution pending) {
				event.getServletRequest().removeAttribute(ATTRIBUTE);
				pending.execution.close();
				pending.observation.stop();
			}
		}

	}

}
