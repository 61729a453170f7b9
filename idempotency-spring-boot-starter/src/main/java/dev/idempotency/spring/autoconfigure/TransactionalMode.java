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

import java.util.List;

import javax.sql.DataSource;

import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.transaction.RequestTransactions;
import dev.idempotency.spring.transaction.TransactionalStore;
import dev.idempotency.spring.web.IdempotencyFilter;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The start-up checks of the transactional mode (a policy with
 * {@code transactional=true}), which fail start-up with what is missing rather than let a
 * request run without the one transaction it was configured for.
 *
 * @author Idempotency contributors
 */
final class TransactionalMode {

	private TransactionalMode() {
	}

	/**
	 * Return whether any setting asks for the transactional mode.
	 * @param properties the properties
	 * @return {@code true} if the global setting or a named policy is transactional
	 */
	static boolean isConfigured(IdempotencyProperties properties) {
		return Boolean.TRUE.equals(properties.getTransactional()) || properties.getPolicies()
			.values()
			.stream()
			.anyMatch((policy) -> Boolean.TRUE.equals(policy.getTransactional()));
	}

	/**
	 * Give the filter the transaction manager that the requests of transactional policies
	 * run in, after checking that the store and the manager can make the claim, the
	 * handler's work and the stored response one transaction.
	 * @param filter the filter
	 * @param policies the policies, of which at least one is transactional
	 * @param store the store
	 * @param beanFactory the bean factory that holds the transaction managers
	 * @throws IllegalStateException if the store or the transaction manager does not fit
	 */
	static void configure(IdempotencyFilter filter, NamedPolicies policies, IdempotencyStore store,
			ListableBeanFactory beanFactory) {
		String subject = "Transactional idempotency policies " + policies.transactionalNames();
		if (!(store instanceof TransactionalStore transactional)) {
			throw new IllegalStateException(subject + " need the jdbc or tiered store (idempotency.store.type), whose"
					+ " claims PostgreSQL or MariaDB holds; the store is " + store.name());
		}
		DataSource dataSource;
		try {
			dataSource = transactional.getTransactionalDataSource();
		}
		catch (IllegalStateException ex) {
			throw new IllegalStateException(subject + ": " + ex.getMessage(), ex);
		}
		List<PlatformTransactionManager> managers = beanFactory.getBeanProvider(PlatformTransactionManager.class)
			.orderedStream()
			.toList();
		if (managers.size() != 1) {
			throw new IllegalStateException(subject + " need exactly one PlatformTransactionManager bean, of the"
					+ " store's DataSource; found " + managers.size());
		}
		PlatformTransactionManager manager = managers.get(0);
		Object managed = dataSourceOf(manager);
		if (managed != dataSource) {
			throw new IllegalStateException(subject + " need the transaction manager to manage the store's DataSource,"
					+ " so that the handler's writes and the stored response commit together; "
					+ manager.getClass().getName() + " manages " + ((managed != null) ? managed : "no DataSource"));
		}
		transactional.enableTransactionalClaims();
		filter.setRequestTransactions(new RequestTransactions(manager, dataSource));
	}

	// DataSourceTransactionManager, JdbcTransactionManager, JpaTransactionManager and
	// HibernateTransactionManager all expose their data source as a bean property
	private static @Nullable Object dataSourceOf(PlatformTransactionManager manager) {
		BeanWrapperImpl wrapper = new BeanWrapperImpl(manager);
		if (!wrapper.isReadableProperty("dataSource")) {
			return null;
		}
		Object dataSource = wrapper.getPropertyValue("dataSource");
		return (dataSource instanceof DataSource) ? dataSource : null;
	}

}
