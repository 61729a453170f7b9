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

package dev.idempotency.sample.payments;

import java.net.URI;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers refused and failed requests with RFC 9457 problem details.
 * <p>
 * A 402 (insufficient funds), 400 or 404 is deterministic: the idempotency layer stores
 * it and replays it to retries. A 5xx from the gateway is transient: it is not stored,
 * and a retry with the same key runs the payment again. So is a 503 for a database the
 * payment could not reach (a connection lost or refused in the middle of the payment):
 * the payment's own transactions roll back, and a retry finds the payment where it
 * stopped.
 *
 * @author Idempotency contributors
 */
@RestControllerAdvice
class ProblemHandler {

	static final String TYPE_BASE = "https://payments.example/problems/";

	private static final Log logger = LogFactory.getLog(ProblemHandler.class);

	@ExceptionHandler
	ProblemDetail paymentRefused(PaymentException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(ex.getStatus(), ex.getMessage());
		problem.setType(URI.create(TYPE_BASE + ex.getType()));
		return problem;
	}

	@ExceptionHandler
	ProblemDetail gatewayFailed(GatewayException ex) {
		HttpStatus status = HttpStatus.resolve(ex.getStatus());
		ProblemDetail problem = ProblemDetail.forStatusAndDetail((status != null) ? status : HttpStatus.BAD_GATEWAY,
				"The payment gateway failed; retry later");
		problem.setType(URI.create(TYPE_BASE + "gateway-failure"));
		return problem;
	}

	@ExceptionHandler({ DataAccessResourceFailureException.class, TransientDataAccessException.class,
			CannotCreateTransactionException.class, TransactionSystemException.class })
	ResponseEntity<ProblemDetail> databaseUnavailable(Exception ex) {
		logger.warn("Payments database unavailable, answering 503: " + ex.getMessage());
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
				"The payments database is unavailable; retry with the same Idempotency-Key");
		problem.setType(URI.create(TYPE_BASE + "database-unavailable"));
		return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).header(HttpHeaders.RETRY_AFTER, "1").body(problem);
	}

}
