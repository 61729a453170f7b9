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

package dev.idempotency.spring.autoconfigure;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

import dev.idempotency.spring.autoconfigure.IdempotencyProperties.StoreType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Base of the conditions of the store configurations: matches when
 * {@code idempotency.store.type} is one of the given types. A configuration that may be
 * chosen by {@code auto} lists {@link StoreType#AUTO} and adds its own conditions (such
 * as the presence of a connection factory); the configurations are imported in precedence
 * order under {@code @ConditionalOnMissingBean(IdempotencyStore.class)}, so the first one
 * that matches wins.
 *
 * @author Idempotency contributors
 */
abstract class StoreTypeCondition extends SpringBootCondition {

	static final String PROPERTY = "idempotency.store.type";

	// under the auto-configuration's name, where applications look for what it chose
	private static final Log logger = LogFactory.getLog(IdempotencyAutoConfiguration.class);

	private final Set<StoreType> types;

	StoreTypeCondition(StoreType first, StoreType... others) {
		this.types = EnumSet.of(first, others);
	}

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		StoreType type = configuredType(context);
		if (this.types.contains(type)) {
			return ConditionOutcome.match(PROPERTY + " is " + type);
		}
		return ConditionOutcome.noMatch(PROPERTY + " is " + type + ", not one of " + this.types);
	}

	/**
	 * Log, once per context, which store was chosen and why.
	 * @param store the store's name
	 * @param type the configured store type
	 * @param reason why, for {@code auto}: what the application has
	 */
	static void logChoice(String store, StoreType type, String reason) {
		if (logger.isInfoEnabled()) {
			logger.info("Idempotency store: " + store + " (" + PROPERTY + "=" + type.name().toLowerCase(Locale.ROOT)
					+ ((type == StoreType.AUTO) ? ": " + reason : "") + ")");
		}
	}

	static StoreType configuredType(ConditionContext context) {
		return configuredType(Binder.get(context.getEnvironment()));
	}

	static StoreType configuredType(Binder binder) {
		return binder.bind(PROPERTY, StoreType.class).orElse(StoreType.AUTO);
	}

}
